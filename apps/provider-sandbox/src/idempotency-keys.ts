import type { Answer, IdempotencyScope } from './provider-sandbox';
import { idempotencyId, type SandboxStore } from './sandbox-store';

/** What a request with an Idempotency-Key may do. */
export type KeyClaim =
  /** The key's stored answer: send it again. */
  | { kind: 'replay'; answer: Answer }
  /** The key was used with other parameters (422). */
  | { kind: 'mismatch' }
  /** Another request with the key is being executed (409, retry later). */
  | { kind: 'in_flight' }
  /** Execute; call `release` once its commit ended (with the answer recorded, or failed). */
  | { kind: 'claimed'; release: () => void };

/**
 * The provider's own idempotency: a key is scoped to an operation (`charge.create`,
 * `charge.refund`, `payout.create`); its answer is stored in the same commit as the change it
 * made, so a retry after any crash either replays it or (nothing was committed) executes anew.
 * While a request holds a key (in memory: a crash frees it), another one with the key gets 409.
 * Answers that changed nothing (validation, 404, 422, 500) are not stored.
 */
export class IdempotencyKeys {
  private readonly inFlight = new Set<string>();

  constructor(private readonly store: SandboxStore) {}

  /** Synchronous, so a check and the claim cannot interleave with another request's. */
  claim(scope: IdempotencyScope): KeyClaim {
    const id = idempotencyId(scope.operation, scope.key);
    const record = this.store.state.idempotency.get(id);
    if (record) {
      return record.fingerprint === scope.fingerprint
        ? { kind: 'replay', answer: { status: record.status, body: record.body } }
        : { kind: 'mismatch' };
    }
    if (this.inFlight.has(id)) return { kind: 'in_flight' };
    this.inFlight.add(id);
    return { kind: 'claimed', release: () => this.inFlight.delete(id) };
  }
}

/** JSON with object keys sorted at every level: the fingerprint of a normalized request. */
export function fingerprintOf(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}
