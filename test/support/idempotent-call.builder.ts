import { createHash, randomUUID } from 'node:crypto';
import type { IdempotentCall, IdempotentOperation } from '@ledgerkey/idempotency';

/**
 * Test data for the idempotency protocol: `anIdempotentCall().withPayload(...).executing(...)`.
 * Immutable: every method returns a new builder, so a retry is the same builder built again.
 * Defaults: a fresh tenant and key, operation `test.things.create` answering 201.
 */
export class IdempotentCallBuilder<TResult> {
  constructor(private readonly call: IdempotentCall<TResult>) {}

  forTenant(tenantId: string): IdempotentCallBuilder<TResult> {
    return new IdempotentCallBuilder({ ...this.call, tenantId });
  }

  withKey(key: string): IdempotentCallBuilder<TResult> {
    return new IdempotentCallBuilder({ ...this.call, key });
  }

  withPayload(payload: unknown): IdempotentCallBuilder<TResult> {
    return new IdempotentCallBuilder({ ...this.call, payload });
  }

  /** The request's exact bytes, as the HTTP adapter digests them. */
  withRequestBytes(bytes: string): IdempotentCallBuilder<TResult> {
    return new IdempotentCallBuilder({
      ...this.call,
      requestDigest: createHash('sha256').update(bytes).digest(),
    });
  }

  withOperation(operation: Partial<IdempotentOperation<TResult>>): IdempotentCallBuilder<TResult> {
    return new IdempotentCallBuilder({ ...this.call, operation: { ...this.call.operation, ...operation } });
  }

  executing<TOther>(execute: () => Promise<TOther>): IdempotentCallBuilder<TOther> {
    const operation = this.call.operation as IdempotentOperation<unknown> as IdempotentOperation<TOther>;
    return new IdempotentCallBuilder<TOther>({ ...this.call, operation, execute });
  }

  build(): IdempotentCall<TResult> {
    return { ...this.call };
  }
}

export function anIdempotentCall(): IdempotentCallBuilder<{ id: string }> {
  return new IdempotentCallBuilder<{ id: string }>({
    operation: { operation: 'test.things.create', status: 201 },
    tenantId: randomUUID(),
    key: `key-${randomUUID()}`,
    payload: { amount: 100, currency: 'EUR' },
    execute: () => Promise.resolve({ id: randomUUID() as string }),
  });
}
