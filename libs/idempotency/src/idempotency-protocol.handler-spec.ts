import { randomUUID } from 'node:crypto';
import { startHandlerContext, type HandlerContext } from '../../../test/support/handler-context';
import { anIdempotentCall, type IdempotentCallBuilder } from '../../../test/support/idempotent-call.builder';
import { TEST_SEALER } from '../../../test/support/test-sealer';
import { TestClock } from '../../../test/support/test-clock';
import { DataSource } from 'typeorm';
import { autocommitSql, clsTransactionalSql, clsTransactionRunner } from './cls-transactions';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from './idempotency.errors';
import type { IdempotencyOutcome } from './idempotency.observer';
import type { OutcomeClassifier, TransactionRunner } from './idempotency-ports';
import { IdempotencyProtocol, type IdempotentCall } from './idempotency-protocol';
import { IdempotencyRecordRepository } from './idempotency-record.repository';

/**
 * The protocol on real PostgreSQL, wired as the module wires it (nestjs-cls transactions, the SQL
 * store), without HTTP. Operations write "effects" into a table of this file, in the key's
 * transaction, so that exactly-once and rollbacks are visible.
 */
const TTL_SECONDS = 3600;
const EFFECTS = 'handler_spec_protocol_effects';
const PROBLEM_JSON = 'application/problem+json; charset=utf-8';

class RejectedForTest extends Error {
  readonly code = 'rejected_for_test';
}

/** `RejectedForTest` is a business outcome (stored, replayed); anything else is a failure. */
const classifier: OutcomeClassifier = {
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

let ctx: HandlerContext;
let clock: TestClock;
let protocol: IdempotencyProtocol;
let outcomes: IdempotencyOutcome[];
/** Runs before the protocol's next transaction begins (once): how the races below are staged. */
let beforeNextTransaction: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ctx = await startHandlerContext();
  await ctx.db.query(
    `CREATE TABLE IF NOT EXISTS ${EFFECTS} (tenant_id uuid NOT NULL, key text NOT NULL, id uuid NOT NULL)`,
  );
  const transactions = clsTransactionRunner(ctx.txHost);
  const staged: TransactionRunner = {
    run: async (work) => {
      const hook = beforeNextTransaction;
      beforeNextTransaction = undefined;
      if (hook) await hook();
      return transactions.run(work);
    },
  };
  clock = new TestClock();
  protocol = new IdempotencyProtocol({
    ttlSeconds: TTL_SECONDS,
    transactions: staged,
    records: new IdempotencyRecordRepository(
      clsTransactionalSql(ctx.txHost),
      autocommitSql(ctx.app.get(DataSource)),
    ),
    classifier,
    clock,
    sealer: TEST_SEALER,
    observer: { observe: (_operation, outcome) => outcomes.push(outcome), purged: () => undefined },
  });
});

beforeEach(() => {
  outcomes = [];
  beforeNextTransaction = undefined;
});

afterAll(async () => {
  await ctx?.db.query(`DROP TABLE IF EXISTS ${EFFECTS}`);
  await ctx?.close();
});

/** An operation that writes one effect row in the key's transaction and answers its id. */
function writingEffect<T>(call: IdempotentCallBuilder<T>): IdempotentCallBuilder<{ id: string }> {
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

/**
 * A call whose operation must not get to run with the key: its answer must be a replay or a
 * refusal. (It is started: a new key's claim goes with the operation's first statement, and this
 * one fails before any; what the request gets is then decided by the claim, as if it came first.)
 */
function mustNotRun<T>(call: IdempotentCallBuilder<T>): IdempotentCall<unknown> {
  return call.executing<unknown>(() => Promise.reject(new Error('the operation ran again'))).build();
}

async function effectsOf<T>(call: IdempotentCallBuilder<T>): Promise<number> {
  const { tenantId, key } = call.build();
  const { rows } = await ctx.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${EFFECTS} WHERE tenant_id = $1 AND key = $2`,
    [tenantId, key],
  );
  return rows[0].n;
}

async function recordOf<T>(call: IdempotentCallBuilder<T>): Promise<StoredRow | undefined> {
  const { tenantId, operation, key } = call.build();
  const { rows } = await ctx.db.query<StoredRow>(
    `SELECT state, response_status, response_headers, response_body, response_sealed, attempt, expires_at
       FROM idempotency_records WHERE company_id = $1 AND operation = $2 AND idempotency_key = $3`,
    [tenantId, operation.operation, key],
  );
  return rows[0];
}

/** Holds the key's advisory lock (the claim's) in a transaction of its own while `during` runs. */
async function whileLockHeld<C, T>(call: IdempotentCallBuilder<C>, during: () => Promise<T>): Promise<T> {
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
function latch(): { started: Promise<void>; running: () => Promise<void>; release: () => void } {
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

/** `call` that, once its first statement holds the key, waits for `running` to be released. */
function holdingTheKey<T>(call: IdempotentCallBuilder<T>, running: ReturnType<typeof latch>) {
  return call.executing(async () => {
    const written = await call.build().execute();
    await running.running();
    return written;
  });
}

describe('first use', () => {
  it('executes once and stores the answer as completed: status, Content-Type, Location, exact body', async () => {
    const call = writingEffect(
      anIdempotentCall().withOperation({
        location: (result) => `/v1/things/${(result as { id: string }).id}`,
      }),
    );
    const answer = await protocol.execute(call.build());

    const { id } = JSON.parse(answer.body) as { id: string };
    expect(answer).toEqual({
      outcome: 'executed',
      status: 201,
      headers: {
        'Content-Type': 'application/json; charset=utf-8',
        Location: `/v1/things/${id}`,
        'Idempotency-Key-Expires': new Date(clock.now().getTime() + TTL_SECONDS * 1000).toUTCString(),
      },
      body: JSON.stringify({ id }),
    });
    expect(await recordOf(call)).toMatchObject({
      state: 'completed',
      response_status: 201,
      response_headers: { 'Content-Type': 'application/json; charset=utf-8', Location: `/v1/things/${id}` },
      response_body: answer.body,
      response_sealed: false,
      attempt: 1,
    });
    expect(await effectsOf(call)).toBe(1);
    expect(outcomes).toEqual(['executed']);
  });
});

describe('a retry with the same bytes (findReplay)', () => {
  const BYTES = '{"amount":100,"currency":"EUR"}';

  function knownRequestOf<T>(call: IdempotentCallBuilder<T>) {
    const { operation, tenantId, key, requestDigest } = call.build();
    return { operation, tenantId, key, requestDigest: requestDigest! };
  }

  it('is answered from the stored record by one read: same answer as a replay, nothing runs', async () => {
    const call = writingEffect(anIdempotentCall().withRequestBytes(BYTES));
    const first = await protocol.execute(call.build());
    clock.advance(60);

    const replay = await whileLockHeld(call, () => protocol.findReplay(knownRequestOf(call)));

    expect(replay).toEqual({
      outcome: 'replayed',
      status: first.status,
      headers: { ...first.headers, 'Idempotent-Replayed': 'true' },
      body: first.body,
    });
    expect(await effectsOf(call)).toBe(1);
    expect(outcomes).toEqual(['executed', 'replayed']);
  });

  it('other bytes (even the same JSON spelled differently) are left to execute(): null', async () => {
    const call = writingEffect(anIdempotentCall().withRequestBytes(BYTES));
    await protocol.execute(call.build());

    expect(await protocol.findReplay(knownRequestOf(call.withRequestBytes(` ${BYTES}`)))).toBeNull();
    // … where the normalized payload decides: the same payload replays.
    const replay = await protocol.execute(mustNotRun(call.withRequestBytes(` ${BYTES}`)));
    expect(replay.outcome).toBe('replayed');
  });

  it('finds nothing for a new key, an expired one, or a record stored without bytes (the CLI)', async () => {
    const fresh = anIdempotentCall().withRequestBytes(BYTES);
    expect(await protocol.findReplay(knownRequestOf(fresh))).toBeNull();

    const expiring = writingEffect(anIdempotentCall().withRequestBytes(BYTES));
    await protocol.execute(expiring.build());
    clock.advance(TTL_SECONDS);
    expect(await protocol.findReplay(knownRequestOf(expiring))).toBeNull();

    const withoutBytes = writingEffect(anIdempotentCall());
    await protocol.execute(withoutBytes.build());
    expect(await protocol.findReplay(knownRequestOf(withoutBytes.withRequestBytes(BYTES)))).toBeNull();
    expect(outcomes).toEqual(['executed', 'executed']);
  });

  it('replays a stored business rejection too', async () => {
    const call = anIdempotentCall().withRequestBytes(BYTES);
    const rejecting = call.executing(() => Promise.reject(new RejectedForTest()));
    const first = await protocol.execute(rejecting.build());

    const replay = await protocol.findReplay(knownRequestOf(call));

    expect(first.outcome).toBe('business_rejection');
    expect(replay).toMatchObject({ outcome: 'replayed', status: first.status, body: first.body });
  });
});

describe('a finished key', () => {
  it('replays the stored answer byte for byte, with Idempotent-Replayed and the same expiry; nothing runs', async () => {
    const call = writingEffect(anIdempotentCall());
    const first = await protocol.execute(call.build());
    clock.advance(60);

    const replay = await protocol.execute(mustNotRun(call));

    expect(replay).toEqual({
      outcome: 'replayed',
      status: first.status,
      headers: { ...first.headers, 'Idempotent-Replayed': 'true' },
      body: first.body,
    });
    expect(await effectsOf(call)).toBe(1);
    expect(outcomes).toEqual(['executed', 'replayed']);
  });

  it('needs no lock: it replays even while another transaction holds the key lock', async () => {
    const call = writingEffect(anIdempotentCall());
    const first = await protocol.execute(call.build());

    const replay = await whileLockHeld(call, () => protocol.execute(mustNotRun(call)));

    expect(replay.outcome).toBe('replayed');
    expect(replay.body).toBe(first.body);
  });

  it('twenty simultaneous retries all get the replay, byte-identical (none gets 409)', async () => {
    const call = writingEffect(anIdempotentCall());
    const first = await protocol.execute(call.build());

    const retries = await Promise.allSettled(
      Array.from({ length: 20 }, () => protocol.execute(mustNotRun(call))),
    );

    expect(retries.map((retry) => retry.status)).toEqual(Array(20).fill('fulfilled'));
    for (const retry of retries) {
      expect(retry).toMatchObject({ value: { outcome: 'replayed', status: 201, body: first.body } });
    }
    expect(await effectsOf(call)).toBe(1);
  });

  it('with another payload → IdempotencyKeyReusedError; the record is untouched and nothing runs', async () => {
    const call = writingEffect(anIdempotentCall());
    await protocol.execute(call.build());
    const before = await recordOf(call);

    await expect(
      protocol.execute(mustNotRun(call.withPayload({ amount: 101, currency: 'EUR' }))),
    ).rejects.toBeInstanceOf(IdempotencyKeyReusedError);

    expect(await recordOf(call)).toEqual(before);
    expect(await effectsOf(call)).toBe(1);
    expect(outcomes).toEqual(['executed', 'payload_mismatch']);
  });
});

describe('a busy key', () => {
  it('another transaction holds the key lock → IdempotencyKeyInUseError at once; nothing runs or is stored', async () => {
    const call = writingEffect(anIdempotentCall());

    await whileLockHeld(call, () =>
      expect(protocol.execute(mustNotRun(call))).rejects.toBeInstanceOf(IdempotencyKeyInUseError),
    );
    expect(await recordOf(call)).toBeUndefined();

    const retry = await protocol.execute(call.build());
    expect(retry.outcome).toBe('executed');
    expect(outcomes).toEqual(['in_flight', 'executed']);
  });

  it('while the first request still runs, a second gets 409; once the first committed, a retry replays it', async () => {
    const running = latch();
    const call = writingEffect(anIdempotentCall());
    const slow = holdingTheKey(call, running);
    const first = protocol.execute(slow.build());
    await running.started;

    await expect(protocol.execute(mustNotRun(call))).rejects.toBeInstanceOf(IdempotencyKeyInUseError);

    running.release();
    const answer = await first;
    const retry = await protocol.execute(mustNotRun(call));
    expect(retry).toMatchObject({ outcome: 'replayed', body: answer.body });
    expect(await effectsOf(call)).toBe(1);
  });
});

describe("a new key's claim goes with the operation's first statement", () => {
  /** Whether another session could take the key's lock now (it gives it back at once). */
  async function keyIsFree<T>(call: IdempotentCallBuilder<T>): Promise<boolean> {
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

  it('the key is free until the first statement, held from it until the commit', async () => {
    const call = anIdempotentCall();
    const seen: boolean[] = [];
    const observed = call.executing(async () => {
      seen.push(await keyIsFree(call));
      const written = await writingEffect(call).build().execute();
      seen.push(await keyIsFree(call));
      return written;
    });

    expect((await protocol.execute(observed.build())).outcome).toBe('executed');

    expect(seen).toEqual([true, false]);
    expect(await keyIsFree(call)).toBe(true);
    expect(await effectsOf(call)).toBe(1);
  });

  it('an operation without statements has the claim go with the stored answer', async () => {
    const call = anIdempotentCall().executing(() => Promise.resolve({ computed: true }));

    // The claim went: with the key held elsewhere, the stored answer is refused with it.
    await whileLockHeld(call, () =>
      expect(protocol.execute(call.build())).rejects.toBeInstanceOf(IdempotencyKeyInUseError),
    );
    expect(await recordOf(call)).toBeUndefined();

    const answer = await protocol.execute(call.build());

    expect(answer).toMatchObject({ outcome: 'executed', body: '{"computed":true}' });
    expect(await recordOf(call)).toMatchObject({ state: 'completed', response_body: answer.body });
  });

  it('a finished key refuses the first statement: nothing of this run is written, the answer is the replay', async () => {
    const call = writingEffect(anIdempotentCall());
    const first = await protocol.execute(call.build());

    // Other bytes of the same payload: no findReplay, so the operation starts.
    const retry = await protocol.execute(call.withRequestBytes(' {}').build());

    expect(retry).toMatchObject({ outcome: 'replayed', body: first.body });
    expect(await effectsOf(call)).toBe(1);
    expect(outcomes).toEqual(['executed', 'replayed']);
  });

  it('a key held by another transaction refuses the first statement: 409, nothing written', async () => {
    const call = writingEffect(anIdempotentCall());

    await whileLockHeld(call, () =>
      expect(protocol.execute(call.build())).rejects.toBeInstanceOf(IdempotencyKeyInUseError),
    );

    expect(await effectsOf(call)).toBe(0);
    expect(await recordOf(call)).toBeUndefined();
    expect(outcomes).toEqual(['in_flight']);
  });

  it('two requests slow before their first statement: the first to send one executes, the other replays it', async () => {
    const call = anIdempotentCall();
    const running = latch();
    const slow = call.executing(async () => {
      await running.running();
      return writingEffect(call).build().execute();
    });
    const first = protocol.execute(slow.build());
    await running.started;

    // The slow one has sent nothing: the key is free, and this request takes and finishes it.
    const second = await protocol.execute(writingEffect(call).build());
    running.release();
    const answer = await first;

    expect(second.outcome).toBe('executed');
    expect(answer).toMatchObject({ outcome: 'replayed', body: second.body });
    expect(await effectsOf(call)).toBe(1);
  });

  it('a business rejection before the first statement, on a key another request holds → 409; its result stands', async () => {
    const call = anIdempotentCall();
    const running = latch();
    const rival = writingEffect(call);
    const slowRival = holdingTheKey(rival, running);
    const rivalDone = protocol.execute(slowRival.build());
    await running.started;

    const rejecting = call.executing(() =>
      Promise.reject(new RejectedForTest('rejected before any statement')),
    );
    await expect(protocol.execute(rejecting.build())).rejects.toBeInstanceOf(IdempotencyKeyInUseError);

    running.release();
    expect((await rivalDone).outcome).toBe('executed');
    expect(await effectsOf(call)).toBe(1);
    expect(await recordOf(call)).toMatchObject({ state: 'completed', response_status: 201 });
  });
});

describe('a store that cannot send the claim ahead (a connection without pipelining)', () => {
  it('claims first, in the one transaction of the operation', async () => {
    let transactionsRun = 0;
    const counting: TransactionRunner = {
      run: (work) => {
        transactionsRun += 1;
        return clsTransactionRunner(ctx.txHost).run(work);
      },
    };
    const { lead: _ahead, ...withoutLead } = clsTransactionalSql(ctx.txHost);
    const claimingFirst = new IdempotencyProtocol({
      ttlSeconds: TTL_SECONDS,
      transactions: counting,
      records: new IdempotencyRecordRepository(withoutLead, autocommitSql(ctx.app.get(DataSource))),
      classifier,
      clock,
    });
    const call = writingEffect(anIdempotentCall());

    const first = await claimingFirst.execute(call.build());
    expect(first.outcome).toBe('executed');
    expect(transactionsRun).toBe(1);

    const retry = await claimingFirst.execute(call.withRequestBytes(' {}').build());
    expect(retry).toMatchObject({ outcome: 'replayed', body: first.body });
    expect(transactionsRun).toBe(2);
    expect(await effectsOf(call)).toBe(1);
  });
});

describe('a business rejection', () => {
  it('rolls back everything the operation wrote and stores the rendered rejection as failed_final; a retry replays it', async () => {
    const call = anIdempotentCall();
    const rejecting = call.executing(async () => {
      await writingEffect(call).build().execute();
      throw new RejectedForTest('order already invoiced');
    });

    const answer = await protocol.execute(rejecting.build());

    const body = JSON.stringify({ code: 'rejected_for_test', detail: 'order already invoiced' });
    expect(answer).toMatchObject({ outcome: 'business_rejection', status: 409, body });
    expect(answer.headers).toMatchObject({ 'Content-Type': PROBLEM_JSON });
    expect(await effectsOf(call)).toBe(0);
    expect(await recordOf(call)).toMatchObject({
      state: 'failed_final',
      response_status: 409,
      response_headers: { 'Content-Type': PROBLEM_JSON },
      response_body: body,
    });

    const replay = await protocol.execute(mustNotRun(call));
    expect(replay).toMatchObject({ outcome: 'replayed', status: 409, body });
    expect(replay.headers['Idempotent-Replayed']).toBe('true');
    expect(outcomes).toEqual(['business_rejection', 'replayed']);
  });

  it('race: another request with the key executes between the rollback and the recording → this one answers with its result; one effect', async () => {
    const call = anIdempotentCall();
    const rival = writingEffect(call);
    let rivalAnswer: Awaited<ReturnType<IdempotencyProtocol['execute']>> | undefined;
    const rejecting = call.executing(() => {
      beforeNextTransaction = async () => {
        rivalAnswer = await protocol.execute(rival.build());
      };
      return Promise.reject(new RejectedForTest('rejected by a state the rival changed'));
    });

    const answer = await protocol.execute(rejecting.build());

    expect(rivalAnswer?.outcome).toBe('executed');
    expect(answer).toMatchObject({ outcome: 'replayed', status: 201, body: rivalAnswer?.body });
    expect(await effectsOf(call)).toBe(1);
    expect(await recordOf(call)).toMatchObject({ state: 'completed', response_body: rivalAnswer?.body });
  });

  it('race: another request with the key is still running when the rejection would be recorded → 409; its result stands', async () => {
    const call = anIdempotentCall();
    const running = latch();
    const rival = writingEffect(call);
    const slowRival = holdingTheKey(rival, running);
    let rivalDone: Promise<unknown> = Promise.resolve();
    const rejecting = call.executing(() => {
      beforeNextTransaction = async () => {
        rivalDone = protocol.execute(slowRival.build());
        await running.started;
      };
      return Promise.reject(new RejectedForTest('rejected'));
    });

    await expect(protocol.execute(rejecting.build())).rejects.toBeInstanceOf(IdempotencyKeyInUseError);

    running.release();
    await rivalDone;
    expect(await effectsOf(call)).toBe(1);
    expect(await recordOf(call)).toMatchObject({ state: 'completed', response_status: 201 });
  });

  it('race: the request that executed meanwhile had another payload → 422; its result stands', async () => {
    const call = anIdempotentCall();
    const rival = writingEffect(call.withPayload({ amount: 999, currency: 'EUR' }));
    const rejecting = call.executing(() => {
      beforeNextTransaction = async () => {
        await protocol.execute(rival.build());
      };
      return Promise.reject(new RejectedForTest('rejected'));
    });

    await expect(protocol.execute(rejecting.build())).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
    expect(await recordOf(call)).toMatchObject({ state: 'completed', response_status: 201 });
    expect(await effectsOf(call)).toBe(1);
  });
});

describe('a failure that is not a business outcome', () => {
  it('rolls back and stores nothing: the error propagates, and a retry with the key executes', async () => {
    const call = anIdempotentCall();
    const failing = call.executing(async () => {
      await writingEffect(call).build().execute();
      throw new Error('connection reset');
    });

    await expect(protocol.execute(failing.build())).rejects.toThrow('connection reset');
    expect(await recordOf(call)).toBeUndefined();
    expect(await effectsOf(call)).toBe(0);
    expect(outcomes).toEqual([]);

    expect((await protocol.execute(writingEffect(call).build())).outcome).toBe('executed');
    expect(await effectsOf(call)).toBe(1);
  });
});

describe('expiry', () => {
  it('one second before the window ends, the key still replays', async () => {
    const call = writingEffect(anIdempotentCall());
    const first = await protocol.execute(call.build());
    clock.advance(TTL_SECONDS - 1);

    expect(await protocol.execute(mustNotRun(call))).toMatchObject({ outcome: 'replayed', body: first.body });
  });

  it('after the window the key is new: it executes again (another payload is no mismatch) and replaces the record', async () => {
    const call = writingEffect(anIdempotentCall());
    await protocol.execute(call.build());
    clock.advance(TTL_SECONDS);

    const again = await protocol.execute(writingEffect(call.withPayload({ amount: 5 })).build());

    expect(again.outcome).toBe('executed');
    expect(again.headers['Idempotency-Key-Expires']).toBe(
      new Date(clock.now().getTime() + TTL_SECONDS * 1000).toUTCString(),
    );
    expect(await effectsOf(call)).toBe(2);
    expect(await recordOf(call)).toMatchObject({ state: 'completed', response_body: again.body });
  });
});

describe('sensitive answers', () => {
  it('are stored sealed and replayed opened', async () => {
    const secret = `whsec_${randomUUID()}`;
    const call = anIdempotentCall()
      .withOperation({ sensitiveResponse: true })
      .executing(() => Promise.resolve({ secret }));

    const first = await protocol.execute(call.build());
    const replay = await protocol.execute(mustNotRun(call));

    expect(JSON.parse(first.body)).toEqual({ secret });
    expect(replay.body).toBe(first.body);
    const stored = await recordOf(call);
    expect(stored).toMatchObject({ response_sealed: true, response_body: TEST_SEALER.seal(first.body) });
    expect(stored?.response_body).not.toContain(secret);
  });

  it('other answers are stored as they are', async () => {
    const call = anIdempotentCall();
    const first = await protocol.execute(call.build());
    expect(await recordOf(call)).toMatchObject({ response_sealed: false, response_body: first.body });
  });
});
