import type { VerifiedApiKey } from '../api-keys/api-keys.repository';

/** How long a verified key is trusted while this process hears of revocations (LISTEN). */
export const VERIFIED_KEY_TTL_LISTENING_MS = 30_000;
/**
 * How long it is trusted otherwise (no listener yet, or its connection is down): the bound on
 * how long a revoked key keeps working in a process that does not hear of it.
 */
export const VERIFIED_KEY_TTL_DEAF_MS = 5_000;
const VERIFIED_KEYS_MAX = 10_000;

interface Entry {
  key: VerifiedApiKey;
  /** When the lookup that verified it started (monotonic ms). */
  verifiedAt: number;
}

/**
 * This process's cache of verified API keys (key hash, hex → key and company): one database
 * round trip saved on nearly every request. Unknown keys are never cached. An entry is trusted
 * for 30 s only if it was verified while the revocation listener was connected, and the listener
 * still is; otherwise for 5 s. The listener evicts revoked keys (`forget`).
 */
export class VerifiedApiKeys {
  private readonly entries = new Map<string, Entry>();
  /** Since when the listener has been connected without interruption; undefined while it is not. */
  private listeningSince: number | undefined;
  /** Bumped by every revocation heard and every change of the listener's state. */
  private generation = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  get(hashHex: string): VerifiedApiKey | undefined {
    const entry = this.entries.get(hashHex);
    if (!entry) return undefined;
    const age = this.now() - entry.verifiedAt;
    const trusted =
      this.listeningSince !== undefined && entry.verifiedAt >= this.listeningSince
        ? VERIFIED_KEY_TTL_LISTENING_MS
        : VERIFIED_KEY_TTL_DEAF_MS;
    if (age < trusted) return entry.key;
    this.entries.delete(hashHex);
    return undefined;
  }

  /** Call before looking a key up; pass the ticket to `put`. */
  startLookup(): { generation: number; at: number } {
    return { generation: this.generation, at: this.now() };
  }

  /**
   * Caches a key found active. Skipped when a revocation was heard (or the listener's state
   * changed) during the lookup: the lookup may have read the key just before its revocation
   * committed, and caching that would outlive the notification.
   */
  put(hashHex: string, key: VerifiedApiKey, ticket: { generation: number; at: number }): void {
    if (ticket.generation !== this.generation) return;
    this.entries.delete(hashHex);
    // Map iteration order is insertion order: the first entry is the oldest.
    if (this.entries.size >= VERIFIED_KEYS_MAX)
      this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(hashHex, { key, verifiedAt: ticket.at });
  }

  /** A revocation was heard. */
  forget(hashHex: string): void {
    this.generation += 1;
    this.entries.delete(hashHex);
  }

  /** The listener is connected and LISTENing: revocations from now on are heard. */
  listening(): void {
    this.generation += 1;
    this.listeningSince = this.now();
  }

  /** The listener's connection is gone: revocations may be missed; every entry falls back to the short TTL. */
  deaf(): void {
    this.generation += 1;
    this.listeningSince = undefined;
  }
}
