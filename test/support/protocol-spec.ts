import { randomUUID } from 'node:crypto';
import {
  IdempotencyProtocol,
  type IdempotencyOutcome,
  type IdempotencyRecordStore,
  type IdempotentCall,
  type OutcomeClassifier,
  type TransactionRunner,
} from '@ledgerkey/idempotency';
import { startHandlerContext, type HandlerContext } from './handler-context';
import type { IdempotentCallBuilder } from './idempotent-call.builder';
import { TestClock } from './test-clock';
import { TEST_SEALER } from './test-sealer';

/**
 * The idempotency protocol's handler specs: the protocol on real PostgreSQL, wired as the module
 * wires it (nestjs-cls transactions, the SQL store: `ProtocolWiring`, from the lib's own files),
 * without HTTP. Operations write "effects" into a table of the spec file, in the key's transaction, so
 * that exactly-once and rollbacks are visible. One context per spec file (`useProtocolSpec`).
 */
export const TTL_SECONDS = 3600;
/** One per spec file: files run in parallel, and each drops its own. */
const EFFECTS = `handler_spec_protocol_effects_${randomUUID().slice(0, 8)}`;
export const PROBLEM_JSON = 'application/problem+json; charset=utf-8';

export class RejectedForTest extends Error {
  readonly code = 'rejected_for_test';
}

/** `RejectedForTest` is a business outcome (stored, replayed); anything else is a failure. */
export const classifier: OutcomeClassifier = {
  classify: (error) =>
    error instanceof RejectedForTest
      ? {
          status: 409,
          headers: { 'Content-Type': PROBLEM_JSON },
          body: JSON.stringify({ code: error.code, detail: error.message }),
        }
      : null,
};

interface StoredRow {
  state: string;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
  response_sealed: boolean;
  attempt: number;
  expires_at: Date;
}

/** The protocol's ports as the module wires them (the spec file may import them; test/support may not). */
export type ProtocolWiring = (ctx: HandlerContext) => {
  transactions: TransactionRunner;
  records: IdempotencyRecordStore;
};

export let ctx: HandlerContext;
export let clock: TestClock;
export let protocol: IdempotencyProtocol;
export let outcomes: IdempotencyOutcome[];
/** `beforeNextTransaction` runs before the protocol's next transaction begins (once): how races are staged. */
export const stage: { beforeNextTransaction?: () => Promise<void> } = {};

/** Starts the context, the table of effects and the protocol for this spec file. */
export function useProtocolSpec(wiring: ProtocolWiring): void {
  beforeAll(async () => {
    ctx = await startHandlerContext();
    await ctx.db.query(
      `CREATE TABLE IF NOT EXISTS ${EFFECTS} (tenant_id uuid NOT NULL, key text NOT NULL, id uuid NOT NULL)`,
    );
    const { transactions, records } = wiring(ctx);
    const staged: TransactionRunner = {
      run: async (work) => {
        const hook = stage.beforeNextTransaction;
        stage.beforeNextTransaction = undefined;
        if (hook) await hook();
        return transactions.run(work);
      },
    };
    clock = new TestClock();
    protocol = new IdempotencyProtocol({
      ttlSeconds: TTL_SECONDS,
      transactions: staged,
      records,
      classifier,
      clock,
      sealer: TEST_SEALER,
      observer: { observe: (_operation, outcome) => outcomes.push(outcome), purged: () => undefined },
    });
  });

  beforeEach(() => {
    outcomes = [];
    stage.beforeNextTransaction = undefined;
  });

  afterAll(async () => {
    await ctx?.db.query(`DROP TABLE IF EXISTS ${EFFECTS}`);
    await ctx?.close();
  });
}

/** An operation that writes one effect row in the key's transaction and answers its id. */
export function writingEffect<T>(call: IdempotentCallBuilder<T>): IdempotentCallBuilder<{ id: string }> {
  const { tenantId, key } = call.build();
  return call.executing(async (): Promise<{ id: string }> => {
    const id = randomUUID();
    await ctx.txHost.tx.query(`INSERT INTO ${EFFECTS} (tenant_id, key, id) VALUES ($1, $2, $3)`, [
      tenantId,
      key,
      id,
    ]);
    return { id };
  });
}

/** A call whose operation must not get to run with the key: its answer must be a replay or a refusal. */
export function mustNotRun<T>(call: IdempotentCallBuilder<T>): IdempotentCall<unknown> {
  return call.executing<unknown>(() => Promise.reject(new Error('the operation ran again'))).build();
}

export async function effectsOf<T>(call: IdempotentCallBuilder<T>): Promise<number> {
  const { tenantId, key } = call.build();
  const { rows } = await ctx.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${EFFECTS} WHERE tenant_id = $1 AND key = $2`,
    [tenantId, key],
  );
  return rows[0].n;
}

export async function recordOf<T>(call: IdempotentCallBuilder<T>): Promise<StoredRow | undefined> {
  const { tenantId, operation, key } = call.build();
  const { rows } = await ctx.db.query<StoredRow>(
    `SELECT state, response_status, response_headers, response_body, response_sealed, attempt, expires_at
       FROM idempotency_records WHERE company_id = $1 AND operation = $2 AND idempotency_key = $3`,
    [tenantId, operation.operation, key],
  );
  return rows[0];
}

/** Holds the key's advisory lock (the claim's) in a transaction of its own while `during` runs. */
export async function whileLockHeld<C, T>(
  call: IdempotentCallBuilder<C>,
  during: () => Promise<T>,
): Promise<T> {
  const { tenantId, operation, key } = call.build();
  const holder = await ctx.db.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `${tenantId}\n${operation.operation}\n${key}`,
    ]);
    return await during();
  } finally {
    await holder.query('ROLLBACK');
    holder.release();
  }
}

/** A latch: `started` resolves once the operation runs, which then waits for `release()`. */
export function latch(): { started: Promise<void>; running: () => Promise<void>; release: () => void } {
  let markStarted!: () => void;
  let release!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  return {
    started,
    running: async () => {
      markStarted();
      await released;
    },
    release,
  };
}

/** `call` that, once its first statement ran (holding the key), waits for `running` to be released. */
export function holdingTheKey<T>(call: IdempotentCallBuilder<T>, running: ReturnType<typeof latch>) {
  return call.executing(async () => {
    const written = await call.build().execute();
    await running.running();
    return written;
  });
}

/** Whether another session could take the key's lock now (it gives it back at once). */
export async function keyIsFree<T>(call: IdempotentCallBuilder<T>): Promise<boolean> {
  const { tenantId, operation, key } = call.build();
  const { rows } = await ctx.db.query<{ free: boolean }>(
    `SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS free`,
    [`${tenantId}\n${operation.operation}\n${key}`],
  );
  if (rows[0].free) {
    await ctx.db.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [
      `${tenantId}\n${operation.operation}\n${key}`,
    ]);
  }
  return rows[0].free;
}
