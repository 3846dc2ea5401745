import { randomUUID } from 'node:crypto';
import { startHandlerContext, type HandlerContext } from '../../../test/support/handler-context';
import { anIdempotentCall } from '../../../test/support/idempotent-call.builder';
import { TestClock } from '../../../test/support/test-clock';
import { DataSource } from 'typeorm';
import { autocommitSql, clsTransactionalSql, clsTransactionRunner } from './cls-transactions';
import type { EffectAttempt, EffectResult, ExternalEffect } from './external-effect';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from './idempotency.errors';
import type { IdempotencyOutcome } from './idempotency.observer';
import type { OutcomeClassifier } from './idempotency-ports';
import { type ExternalCall, IdempotencyProtocol, type IdempotentOperation } from './idempotency-protocol';
import type { IdempotencyKeyRef } from './idempotency-record';
import { IdempotencyRecordRepository } from './idempotency-record.repository';

/**
 * The protocol for effects outside the database, on real PostgreSQL without HTTP: prepare (the key
 * `in_progress` with the operation's state) → perform (outside any transaction) → settle (fenced),
 * or 202 and release; retries and the recovery take unfinished keys over. The operation's state is
 * a row of this file's table; `perform` is scripted per test.
 */
const TTL_SECONDS = 3600;
const LEASE_SECONDS = 30;
const STATE = 'handler_spec_external_operations';
const OPERATION: IdempotentOperation<Answer> = {
  operation: 'test.charges.create',
  status: 201,
  location: (answer) => `/v1/charges/${answer.id}`,
};

interface State {
  id: string;
}
interface Answer {
  id: string;
  status: string;
}

class RefusedForTest extends Error {
  readonly code = 'refused_for_test';
}

const classifier: OutcomeClassifier = {
  classify: (error) =>
    error instanceof RefusedForTest
      ? {
          status: 422,
          headers: { 'Content-Type': 'application/problem+json; charset=utf-8' },
          body: JSON.stringify({ code: error.code }),
        }
      : null,
};

let ctx: HandlerContext;
let clock: TestClock;
let protocol: IdempotencyProtocol;
let outcomes: IdempotencyOutcome[];

beforeAll(async () => {
  ctx = await startHandlerContext();
  await ctx.db.query(
    `CREATE TABLE IF NOT EXISTS ${STATE} (tenant_id uuid NOT NULL, key text NOT NULL, id uuid NOT NULL,
                                          status text NOT NULL, settlements int NOT NULL DEFAULT 0)`,
  );
  clock = new TestClock();
  protocol = new IdempotencyProtocol({
    ttlSeconds: TTL_SECONDS,
    transactions: clsTransactionRunner(ctx.txHost),
    records: new IdempotencyRecordRepository(
      clsTransactionalSql(ctx.txHost),
      autocommitSql(ctx.app.get(DataSource)),
    ),
    classifier,
    clock,
    observer: { observe: (_operation, outcome) => outcomes.push(outcome), purged: () => undefined },
  });
});

beforeEach(() => {
  outcomes = [];
});

afterAll(async () => {
  await ctx?.db.query(`DROP TABLE IF EXISTS ${STATE}`);
  await ctx?.close();
});

/** What a test scripts: `perform` per attempt; the rest writes this file's table. */
interface Script {
  perform?: (attempt: EffectAttempt, state: State) => Promise<EffectResult<string>>;
  prepare?: () => Promise<void>;
  settle?: () => Promise<void>;
}

const succeeded = (): Promise<EffectResult<string>> => Promise.resolve({ known: true, outcome: 'succeeded' });
const unknown = (): Promise<EffectResult<string>> => Promise.resolve({ known: false, reason: 'timeout' });

function anEffect(
  script: Script = {},
): ExternalEffect<State, string, Answer> & { attempts: EffectAttempt[] } {
  const attempts: EffectAttempt[] = [];
  return {
    attempts,
    leaseSeconds: LEASE_SECONDS,
    retryAfterSeconds: 2,
    async prepare(ref) {
      await script.prepare?.();
      const id = randomUUID();
      await ctx.txHost.tx.query(
        `INSERT INTO ${STATE} (tenant_id, key, id, status) VALUES ($1, $2, $3, 'processing')`,
        [ref.tenantId, ref.key, id],
      );
      return { id };
    },
    async load(ref) {
      const rows = await ctx.txHost.tx.query<Array<{ id: string }>>(
        `SELECT id FROM ${STATE} WHERE tenant_id = $1 AND key = $2 AND status = 'processing'`,
        [ref.tenantId, ref.key],
      );
      if (!rows[0]) throw new Error('no processing operation');
      return { id: rows[0].id };
    },
    async perform(state, attempt) {
      attempts.push(attempt);
      return (script.perform ?? succeeded)(attempt, state);
    },
    async settle(state, outcome) {
      await script.settle?.();
      await ctx.txHost.tx.query(
        `UPDATE ${STATE} SET status = $2, settlements = settlements + 1 WHERE id = $1`,
        [state.id, outcome],
      );
      return { id: state.id, status: outcome };
    },
    pending: (state) => ({ id: state.id, status: 'processing' }),
  };
}

function aCall(
  effect: ExternalEffect<State, string, Answer>,
  base = anIdempotentCall(),
): ExternalCall<State, string, Answer> {
  const { tenantId, key, payload } = base.build();
  return { operation: OPERATION, tenantId, key, payload, effect };
}

function refOf(call: ExternalCall<State, string, Answer>): IdempotencyKeyRef {
  return { tenantId: call.tenantId, operation: OPERATION.operation, key: call.key };
}

async function recordOf(call: ExternalCall<State, string, Answer>): Promise<
  | {
      state: string;
      attempt: number;
      recovery_point: string | null;
      lease_expires_at: Date | null;
      response_status: number | null;
      response_body: string | null;
    }
  | undefined
> {
  const { rows } = await ctx.db.query(
    `SELECT state, attempt, recovery_point, lease_expires_at, response_status, response_body
       FROM idempotency_records WHERE company_id = $1 AND operation = $2 AND idempotency_key = $3`,
    [call.tenantId, OPERATION.operation, call.key],
  );
  return rows[0];
}

async function operationsOf(
  call: ExternalCall<State, string, Answer>,
): Promise<Array<{ status: string; settlements: number }>> {
  const { rows } = await ctx.db.query<{ status: string; settlements: number }>(
    `SELECT status, settlements FROM ${STATE} WHERE tenant_id = $1 AND key = $2`,
    [call.tenantId, call.key],
  );
  return rows;
}

/** A latch: `started` resolves once perform runs, which then waits for `release(result)`. */
function held(): {
  started: Promise<void>;
  perform: () => Promise<EffectResult<string>>;
  release: (result: EffectResult<string>) => void;
} {
  let markStarted!: () => void;
  let release!: (result: EffectResult<string>) => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const released = new Promise<EffectResult<string>>((resolve) => (release = resolve));
  return {
    started,
    perform: () => {
      markStarted();
      return released;
    },
    release,
  };
}

describe('a new key', () => {
  it('commits the key in_progress with the state before perform, performs outside any transaction, then settles and finishes together', async () => {
    let seenDuringPerform: unknown;
    const effect = anEffect({
      perform: async () => {
        seenDuringPerform = {
          transaction: ctx.txHost.isTransactionActive(),
          record: await recordOf(call),
          operations: await operationsOf(call),
        };
        return { known: true, outcome: 'succeeded' };
      },
    });
    const call = aCall(effect);

    const answer = await protocol.executeExternal(call);

    expect(seenDuringPerform).toMatchObject({
      transaction: false,
      record: { state: 'in_progress', attempt: 1, recovery_point: 'prepared', response_status: null },
      operations: [{ status: 'processing', settlements: 0 }],
    });
    const { id } = JSON.parse(answer.body) as Answer;
    expect(answer).toMatchObject({
      outcome: 'executed',
      status: 201,
      body: JSON.stringify({ id, status: 'succeeded' }),
    });
    expect(answer.headers).toMatchObject({ Location: `/v1/charges/${id}` });
    expect(answer.headers['Idempotency-Key-Expires']).toBeDefined();
    expect(await recordOf(call)).toMatchObject({
      state: 'completed',
      attempt: 1,
      lease_expires_at: null,
      response_status: 201,
      response_body: answer.body,
    });
    expect(effect.attempts).toEqual([{ attempt: 1, resumed: false }]);

    const replay = await protocol.executeExternal(
      aCall(
        anEffect({ perform: () => Promise.reject(new Error('ran again')) }),
        anIdempotentCall().forTenant(call.tenantId).withKey(call.key),
      ),
    );
    expect(replay).toMatchObject({ outcome: 'replayed', status: 201, body: answer.body });
    expect(await operationsOf(call)).toEqual([{ status: 'succeeded', settlements: 1 }]);
    expect(outcomes).toEqual(['executed', 'replayed']);
  });

  it("prepare's business rejection is stored as failed_final and replayed; nothing is prepared or performed", async () => {
    const effect = anEffect({ prepare: () => Promise.reject(new RefusedForTest('no')) });
    const call = aCall(effect);

    const answer = await protocol.executeExternal(call);
    const replay = await protocol.executeExternal(call);

    expect(answer).toMatchObject({ outcome: 'business_rejection', status: 422 });
    expect(replay).toMatchObject({ outcome: 'replayed', status: 422, body: answer.body });
    expect(await recordOf(call)).toMatchObject({ state: 'failed_final', response_status: 422 });
    expect(await operationsOf(call)).toEqual([]);
    expect(effect.attempts).toEqual([]);
  });
});

describe('an unknown outcome', () => {
  it('answers 202 with Location and Retry-After, stores no answer and releases the lease; a retry resumes and finishes', async () => {
    const first = anEffect({ perform: unknown });
    const call = aCall(first);

    const pending = await protocol.executeExternal(call);

    const { id } = JSON.parse(pending.body) as Answer;
    expect(pending).toEqual({
      outcome: 'pending',
      status: 202,
      headers: {
        'Content-Type': 'application/json; charset=utf-8',
        Location: `/v1/charges/${id}`,
        'Retry-After': '2',
      },
      body: JSON.stringify({ id, status: 'processing' }),
    });
    expect(await recordOf(call)).toMatchObject({
      state: 'failed_retryable',
      attempt: 1,
      recovery_point: 'outcome_unknown',
      lease_expires_at: null,
      response_body: null,
    });

    const second = anEffect();
    const resumed = await protocol.executeExternal({ ...call, effect: second });

    expect(second.attempts).toEqual([{ attempt: 2, resumed: true }]);
    expect(resumed).toMatchObject({
      outcome: 'resumed',
      status: 201,
      body: JSON.stringify({ id, status: 'succeeded' }),
    });
    expect(await recordOf(call)).toMatchObject({
      state: 'completed',
      attempt: 2,
      response_body: resumed.body,
    });
    expect(await operationsOf(call)).toEqual([{ status: 'succeeded', settlements: 1 }]);
    expect(outcomes).toEqual(['pending', 'resumed']);
  });

  it('a retry with another payload is refused (422) and changes nothing', async () => {
    const call = aCall(anEffect({ perform: unknown }));
    await protocol.executeExternal(call);

    const other = aCall(
      anEffect(),
      anIdempotentCall().forTenant(call.tenantId).withKey(call.key).withPayload({ amount: 7 }),
    );
    await expect(protocol.executeExternal(other)).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
    expect(await recordOf(call)).toMatchObject({ state: 'failed_retryable', attempt: 1 });
  });
});

describe('a running attempt', () => {
  it('holds the key: a retry while its lease runs gets 409 and performs nothing', async () => {
    const latch = held();
    const call = aCall(anEffect({ perform: latch.perform }));
    const first = protocol.executeExternal(call);
    await latch.started;

    const retry = anEffect();
    await expect(protocol.executeExternal({ ...call, effect: retry })).rejects.toBeInstanceOf(
      IdempotencyKeyInUseError,
    );
    expect(retry.attempts).toEqual([]);

    latch.release({ known: true, outcome: 'succeeded' });
    expect(await first).toMatchObject({ outcome: 'executed', status: 201 });
  });

  it('whose lease ran out (it crashed, or hangs) is taken over; the old attempt can no longer finish or release', async () => {
    const latch = held();
    const call = aCall(anEffect({ perform: latch.perform }));
    const stale = protocol.executeExternal(call);
    await latch.started;
    clock.advance(LEASE_SECONDS + 1);

    const takeOver = anEffect({ perform: () => Promise.resolve({ known: true, outcome: 'failed' }) });
    const resumed = await protocol.executeExternal({ ...call, effect: takeOver });
    expect(takeOver.attempts).toEqual([{ attempt: 2, resumed: true }]);
    expect(resumed).toMatchObject({ outcome: 'resumed', status: 201 });

    // The stale attempt learns a different outcome: its settle is fenced off before writing.
    latch.release({ known: true, outcome: 'succeeded' });
    await expect(stale).rejects.toBeInstanceOf(IdempotencyKeyInUseError);
    expect(await operationsOf(call)).toEqual([{ status: 'failed', settlements: 1 }]);
    expect(await recordOf(call)).toMatchObject({
      state: 'completed',
      attempt: 2,
      response_body: resumed.body,
    });
    expect(outcomes).toEqual(['resumed', 'in_flight']);
  });

  it('a taken-over attempt whose outcome is unknown releases nothing of the new owner', async () => {
    const latch = held();
    const call = aCall(anEffect({ perform: latch.perform }));
    const stale = protocol.executeExternal(call);
    await latch.started;
    clock.advance(LEASE_SECONDS + 1);
    const owner = held();
    const resuming = protocol.executeExternal({ ...call, effect: anEffect({ perform: owner.perform }) });
    await owner.started;

    latch.release({ known: false, reason: 'timeout' });
    expect(await stale).toMatchObject({ outcome: 'pending', status: 202 });
    expect(await recordOf(call)).toMatchObject({ state: 'in_progress', attempt: 2 });

    owner.release({ known: true, outcome: 'succeeded' });
    expect(await resuming).toMatchObject({ outcome: 'resumed', status: 201 });
  });
});

describe('failures', () => {
  it('perform throws: the lease is released (effect_failed), the error propagates, a retry resumes', async () => {
    const call = aCall(anEffect({ perform: () => Promise.reject(new Error('adapter bug')) }));

    await expect(protocol.executeExternal(call)).rejects.toThrow('adapter bug');
    expect(await recordOf(call)).toMatchObject({
      state: 'failed_retryable',
      recovery_point: 'effect_failed',
    });

    expect(await protocol.executeExternal({ ...call, effect: anEffect() })).toMatchObject({
      outcome: 'resumed',
    });
  });

  it('settle throws: its writes roll back, the lease is released (outcome_known); a retry performs again, resumed', async () => {
    const call = aCall(anEffect({ settle: () => Promise.reject(new Error('database went away')) }));

    await expect(protocol.executeExternal(call)).rejects.toThrow('database went away');
    expect(await recordOf(call)).toMatchObject({
      state: 'failed_retryable',
      recovery_point: 'outcome_known',
    });
    expect(await operationsOf(call)).toEqual([{ status: 'processing', settlements: 0 }]);

    const retry = anEffect();
    expect(await protocol.executeExternal({ ...call, effect: retry })).toMatchObject({ outcome: 'resumed' });
    expect(retry.attempts).toEqual([{ attempt: 2, resumed: true }]);
    expect(await operationsOf(call)).toEqual([{ status: 'succeeded', settlements: 1 }]);
  });
});

describe('the recovery', () => {
  const query = {
    operation: OPERATION.operation,
    limit: 1000,
    maxAttempts: 3,
    retryBaseMs: 10_000,
    retryMaxMs: 60_000,
  };

  async function stalledKeys(): Promise<string[]> {
    return (await protocol.stalledOperations(query)).map((stalled) => stalled.ref.key);
  }

  it('finds released keys at once and crashed ones once their lease ran out, with a backoff per attempt, up to maxAttempts', async () => {
    const released = aCall(anEffect({ perform: unknown }));
    await protocol.executeExternal(released);
    const latch = held();
    const crashed = aCall(anEffect({ perform: latch.perform }));
    const crashing = protocol.executeExternal(crashed);
    await latch.started;

    expect(await stalledKeys()).toContain(released.key);
    expect(await stalledKeys()).not.toContain(crashed.key);
    clock.advance(LEASE_SECONDS + 1);
    const due = await protocol.stalledOperations(query);
    expect(due.filter((stalled) => [released.key, crashed.key].includes(stalled.ref.key))).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ ref: refOf(released), state: 'failed_retryable', attempt: 1 }),
        expect.objectContaining({
          ref: refOf(crashed),
          state: 'in_progress',
          attempt: 1,
          recoveryPoint: 'prepared',
        }),
      ]),
    );

    // Attempt 2 (the recovery's) is still unknown: attempt 3 waits the base backoff.
    expect(await protocol.resume(refOf(released), OPERATION, anEffect({ perform: unknown }))).toEqual({
      result: 'pending',
      attempt: 2,
      reason: 'timeout',
    });
    expect(await stalledKeys()).not.toContain(released.key);
    clock.advance(10);
    expect(await stalledKeys()).toContain(released.key);
    expect(await protocol.resume(refOf(released), OPERATION, anEffect({ perform: unknown }))).toMatchObject({
      result: 'pending',
      attempt: 3,
    });
    // maxAttempts reached: left unfinished for a client retry or a person.
    clock.advance(3600);
    expect(await stalledKeys()).not.toContain(released.key);
    expect(await recordOf(released)).toMatchObject({ state: 'failed_retryable', attempt: 3 });

    const recovered = await protocol.resume(refOf(crashed), OPERATION, anEffect());
    expect(recovered).toMatchObject({ result: 'completed', attempt: 2, value: { status: 'succeeded' } });
    latch.release({ known: true, outcome: 'succeeded' });
    await expect(crashing).rejects.toBeInstanceOf(IdempotencyKeyInUseError);
    expect(await operationsOf(crashed)).toEqual([{ status: 'succeeded', settlements: 1 }]);
    // A client retry now gets the recovered answer.
    expect(await protocol.executeExternal({ ...crashed, effect: anEffect() })).toMatchObject({
      outcome: 'replayed',
    });
  });

  it('skips a key whose lease still runs, a finished one, and one held by another transaction', async () => {
    const latch = held();
    const running = aCall(anEffect({ perform: latch.perform }));
    const first = protocol.executeExternal(running);
    await latch.started;
    expect(await protocol.resume(refOf(running), OPERATION, anEffect())).toEqual({ result: 'skipped' });
    latch.release({ known: true, outcome: 'succeeded' });
    await first;
    expect(await protocol.resume(refOf(running), OPERATION, anEffect())).toEqual({ result: 'skipped' });

    const released = aCall(anEffect({ perform: unknown }));
    await protocol.executeExternal(released);
    const holder = await ctx.db.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
        `${released.tenantId}\n${OPERATION.operation}\n${released.key}`,
      ]);
      expect(await protocol.resume(refOf(released), OPERATION, anEffect())).toEqual({ result: 'skipped' });
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    expect(await protocol.resume(refOf(released), OPERATION, anEffect())).toMatchObject({
      result: 'completed',
    });
  });
});
