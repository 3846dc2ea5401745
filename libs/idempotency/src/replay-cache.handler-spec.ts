import { randomUUID } from 'node:crypto';
import { startHandlerContext, type HandlerContext } from '../../../test/support/handler-context';
import { anIdempotentCall, type IdempotentCallBuilder } from '../../../test/support/idempotent-call.builder';
import { TEST_SEALER } from '../../../test/support/test-sealer';
import { TestClock } from '../../../test/support/test-clock';
import { DatabasePool } from '@ledgerkey/database';
import { clsTransactionalSql, clsTransactionRunner } from './cls-transactions';
import { IdempotencyKeyReusedError } from './idempotency.errors';
import type { ExternalEffect } from './external-effect';
import type { IdempotencyOutcome } from './idempotency.observer';
import type { OutcomeClassifier } from './idempotency-ports';
import { IdempotencyProtocol } from './idempotency-protocol';
import type { IdempotentAnswer } from './idempotent-executor';
import type { FinishedRecord, IdempotencyKeyRef } from './idempotency-record';
import { IdempotencyRecordRepository } from './idempotency-record.repository';
import { ReplayCache } from './replay-cache';
import { CachedReplays } from './cached-replays';

/**
 * The replay cache on real PostgreSQL: a protocol with a cache (`cached`, this process) and one
 * without (`uncached`, as another process or `IDEMPOTENCY_REPLAY_CACHE_SIZE=0` would be) on the
 * same records and clock. Reads of the database are counted, not faked: the repository is the
 * real one. A deferred constraint trigger makes a COMMIT fail after everything else succeeded.
 */
const TTL_SECONDS = 3600;
const EFFECTS = 'handler_spec_replay_cache_effects';
const PROBLEM_JSON = 'application/problem+json; charset=utf-8';
const BYTES = '{"amount":100,"currency":"EUR"}';

class RejectedForTest extends Error {
  readonly code = 'rejected_for_test';
}

const classifier: OutcomeClassifier = {
  classify: (error) =>
    error instanceof RejectedForTest
      ? {
          status: 409,
          headers: { 'Content-Type': PROBLEM_JSON, 'Retry-After': '7' },
          body: JSON.stringify({ code: error.code }),
        }
      : null,
};

/** The real repository, counting the fast path's database reads. */
class CountingRepository extends IdempotencyRecordRepository {
  finishedReads = 0;

  override findFinished(ref: IdempotencyKeyRef, now: Date): Promise<FinishedRecord | null> {
    this.finishedReads += 1;
    return super.findFinished(ref, now);
  }
}

let ctx: HandlerContext;
let clock: TestClock;
let cache: ReplayCache;
let cachedRecords: CountingRepository;
let cached: IdempotencyProtocol;
let uncached: IdempotencyProtocol;
let outcomes: IdempotencyOutcome[];

beforeAll(async () => {
  ctx = await startHandlerContext();
  await ctx.db.query(`DROP TABLE IF EXISTS ${EFFECTS}`);
  await ctx.db.query(`
    CREATE TABLE ${EFFECTS} (
      tenant_id uuid NOT NULL, key text NOT NULL, id uuid NOT NULL,
      refuse_at_commit boolean NOT NULL DEFAULT false)`);
  await ctx.db.query(`
    CREATE OR REPLACE FUNCTION ${EFFECTS}_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.refuse_at_commit THEN
        RAISE EXCEPTION 'refused at commit';
      END IF;
      RETURN NULL;
    END $$`);
  await ctx.db.query(`
    CREATE CONSTRAINT TRIGGER ${EFFECTS}_refuse AFTER INSERT ON ${EFFECTS}
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${EFFECTS}_refuse()`);
  const transactions = clsTransactionRunner(ctx.txHost);
  const pool = ctx.app.get(DatabasePool);
  // A whole second: the expiry a first answer announces is then exactly the stored one.
  clock = new TestClock(new Date(Math.floor(Date.now() / 1000) * 1000));
  const options = {
    ttlSeconds: TTL_SECONDS,
    transactions,
    classifier,
    clock,
    sealer: TEST_SEALER,
    observer: {
      observe: (_operation: string, outcome: IdempotencyOutcome) => outcomes.push(outcome),
      purged: () => undefined,
    },
  };
  cachedRecords = new CountingRepository(clsTransactionalSql(ctx.txHost), pool);
  cache = new ReplayCache({ maxEntries: 1000, maxBytes: 1 << 24 });
  cached = new IdempotencyProtocol({
    ...options,
    records: cachedRecords,
    cachedReplays: new CachedReplays(cache, options.observer, clock),
  });
  uncached = new IdempotencyProtocol({
    ...options,
    records: new IdempotencyRecordRepository(clsTransactionalSql(ctx.txHost), pool),
  });
});

beforeEach(() => {
  outcomes = [];
  cachedRecords.finishedReads = 0;
});

afterAll(async () => {
  await ctx?.db.query(`DROP TABLE IF EXISTS ${EFFECTS}`);
  await ctx?.db.query(`DROP FUNCTION IF EXISTS ${EFFECTS}_refuse()`);
  await ctx?.close();
});

/** A call with request bytes whose operation writes one effect row and answers its id. */
function aWritingCall(options: { refuseAtCommit?: boolean } = {}): IdempotentCallBuilder<{ id: string }> {
  const call = anIdempotentCall()
    .withRequestBytes(BYTES)
    .withOperation({ location: (result) => `/v1/things/${result.id}` });
  const { tenantId, key } = call.build();
  return call.executing(async (): Promise<{ id: string }> => {
    const id: string = randomUUID();
    await ctx.txHost.tx.query(
      `INSERT INTO ${EFFECTS} (tenant_id, key, id, refuse_at_commit) VALUES ($1, $2, $3, $4)`,
      [tenantId, key, id, options.refuseAtCommit === true],
    );
    return { id };
  });
}

function knownRequestOf<T>(call: IdempotentCallBuilder<T>) {
  const { operation, tenantId, key, requestDigest } = call.build();
  return { operation, tenantId, key, requestDigest: requestDigest! };
}

/** Status, headers in the order they are sent, body and outcome. */
function sent(answer: IdempotentAnswer | null) {
  return answer && { ...answer, headers: Object.entries(answer.headers) };
}

async function recordCount<T>(call: IdempotentCallBuilder<T>): Promise<number> {
  const { tenantId, operation, key } = call.build();
  const { rows } = await ctx.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM idempotency_records
      WHERE company_id = $1 AND operation = $2 AND idempotency_key = $3`,
    [tenantId, operation.operation, key],
  );
  return rows[0].n;
}

describe('a key this process finished', () => {
  it('replays from the cache, without a read, exactly as the database path does: status, headers in order, body', async () => {
    const call = aWritingCall();
    const first = await cached.execute(call.build());
    clock.advance(60);

    const fromCache = await cached.findReplay(knownRequestOf(call));
    const fromDatabase = await uncached.findReplay(knownRequestOf(call));

    expect(cachedRecords.finishedReads).toBe(0);
    expect(fromDatabase).not.toBeNull();
    expect(sent(fromCache)).toEqual(sent(fromDatabase));
    expect(fromCache).toEqual({
      outcome: 'replayed',
      status: 201,
      headers: { ...first.headers, 'Idempotent-Replayed': 'true' },
      body: first.body,
    });
    expect(outcomes).toEqual(['executed', 'replayed', 'replayed']);
  });

  it('a stored business rejection replays from the cache too, identical to the database', async () => {
    const call = anIdempotentCall()
      .withRequestBytes(BYTES)
      .executing(() => Promise.reject(new RejectedForTest()));
    const first = await cached.execute(call.build());

    const fromCache = await cached.findReplay(knownRequestOf(call));

    expect(first.outcome).toBe('business_rejection');
    expect(cachedRecords.finishedReads).toBe(0);
    expect(sent(fromCache)).toEqual(sent(await uncached.findReplay(knownRequestOf(call))));
  });

  it('other bytes are not answered from the cache: another payload still gets the mismatch', async () => {
    const call = aWritingCall();
    await cached.execute(call.build());
    const other = call.withRequestBytes('{"amount":5}').withPayload({ amount: 5 });

    expect(await cached.findReplay(knownRequestOf(other))).toBeNull();
    expect(cachedRecords.finishedReads).toBe(0);
    await expect(cached.execute(other.build())).rejects.toThrow(IdempotencyKeyReusedError);
    // … and the same payload spelled otherwise replays through the claim.
    const respelled = call.withRequestBytes(` ${BYTES}`);
    expect((await cached.execute(respelled.build())).outcome).toBe('replayed');
  });

  it('is not served once expired: the key executes anew, and its new answer replaces the old one', async () => {
    const call = aWritingCall();
    const first = await cached.execute(call.build());
    clock.advance(TTL_SECONDS - 1);
    expect((await cached.findReplay(knownRequestOf(call)))?.body).toBe(first.body);
    expect(cachedRecords.finishedReads).toBe(0);

    clock.advance(1);
    expect(await cached.findReplay(knownRequestOf(call))).toBeNull();
    expect(await cached.findStoredReplay(knownRequestOf(call))).toBeNull();
    expect(cachedRecords.finishedReads).toBe(1);
    const again = await cached.execute(call.build());
    expect(again.outcome).toBe('executed');
    expect(again.body).not.toBe(first.body);

    const replay = await cached.findReplay(knownRequestOf(call));
    expect(replay?.body).toBe(again.body);
    expect(replay?.headers['Idempotency-Key-Expires']).toBe(again.headers['Idempotency-Key-Expires']);
    expect(cachedRecords.finishedReads).toBe(1);
  });

  it('an expiry with milliseconds: the cache stops up to a second early, and the database answers that second', async () => {
    const call = aWritingCall();
    clock.advance(0.7);
    const first = await cached.execute(call.build());
    clock.advance(TTL_SECONDS - 0.5);

    expect(await cached.findReplay(knownRequestOf(call))).toBeNull();
    const replay = await cached.findStoredReplay(knownRequestOf(call));
    // The claim answers that second as well.
    expect((await cached.execute(call.build())).body).toBe(first.body);

    expect(replay?.body).toBe(first.body);
    expect(sent(replay)).toEqual(sent(await uncached.findReplay(knownRequestOf(call))));
    expect(replay?.outcome).toBe('replayed');
    expect(cachedRecords.finishedReads).toBe(1);
  });
});

describe('an operation with an effect outside the database', () => {
  /** Nothing persisted: `perform` answers `outcome` (known) or unknown when it is null. */
  function anEffect(
    outcome: string | null,
  ): ExternalEffect<{ id: string }, string, { id: string; status: string }> {
    return {
      leaseSeconds: 30,
      retryAfterSeconds: 2,
      prepare: () => Promise.resolve({ id: randomUUID() }),
      load: () => Promise.reject(new Error('not resumed in these tests')),
      perform: () =>
        Promise.resolve(outcome === null ? { known: false, reason: 'timeout' } : { known: true, outcome }),
      settle: (state, settled) => Promise.resolve({ id: state.id, status: settled }),
      pending: (state) => ({ id: state.id, status: 'processing' }),
    };
  }

  it('its finished answer replays from the cache, identical to the database; a pending 202 is not kept', async () => {
    const call = anIdempotentCall().withRequestBytes(BYTES).build();
    const first = await cached.executeExternal({ ...call, effect: anEffect('succeeded') });

    const replay = await cached.findReplay({ ...call, requestDigest: call.requestDigest! });

    expect(first.outcome).toBe('executed');
    expect(cachedRecords.finishedReads).toBe(0);
    expect(sent(replay)).toEqual(
      sent(await uncached.findReplay({ ...call, requestDigest: call.requestDigest! })),
    );

    const pendingCall = anIdempotentCall().withRequestBytes(BYTES).build();
    const pending = await cached.executeExternal({ ...pendingCall, effect: anEffect(null) });
    expect(pending.status).toBe(202);
    expect(await cached.findReplay({ ...pendingCall, requestDigest: pendingCall.requestDigest! })).toBeNull();
    expect(cachedRecords.finishedReads).toBe(0);
  });
});

describe('a key another process finished', () => {
  it('costs no read before validation; the claim replays it, and from then on the cache answers', async () => {
    const call = aWritingCall();
    await uncached.execute(call.build());

    expect(await cached.findReplay(knownRequestOf(call))).toBeNull();
    const claimed = await cached.execute(call.build());
    const kept = await cached.findReplay(knownRequestOf(call));

    expect(cachedRecords.finishedReads).toBe(0);
    expect(claimed.outcome).toBe('replayed');
    expect(sent(kept)).toEqual(sent(claimed));
    expect(sent(kept)).toEqual(sent(await uncached.findReplay(knownRequestOf(call))));
  });

  it('findStoredReplay reads it from the database once (bytes that no longer validate), then the cache answers', async () => {
    const call = aWritingCall();
    await uncached.execute(call.build());

    const stored = await cached.findStoredReplay(knownRequestOf(call));
    const kept = await cached.findReplay(knownRequestOf(call));

    expect(cachedRecords.finishedReads).toBe(1);
    expect(stored).not.toBeNull();
    expect(sent(kept)).toEqual(sent(stored));
  });
});

describe('what is never cached', () => {
  it('a transaction whose COMMIT fails leaves no entry: the same bytes find nothing, and nothing is stored', async () => {
    const call = aWritingCall({ refuseAtCommit: true });
    const entries = cache.size;

    await expect(cached.execute(call.build())).rejects.toThrow('refused at commit');

    expect(cache.size).toBe(entries);
    expect(await cached.findReplay(knownRequestOf(call))).toBeNull();
    expect(await cached.findStoredReplay(knownRequestOf(call))).toBeNull();
    expect(await recordCount(call)).toBe(0);
    expect(outcomes).toEqual([]);
  });

  it('a failure inside the operation leaves no entry either', async () => {
    const call = anIdempotentCall()
      .withRequestBytes(BYTES)
      .executing(() => Promise.reject(new Error('connection reset')));
    const entries = cache.size;

    await expect(cached.execute(call.build())).rejects.toThrow('connection reset');

    expect(cache.size).toBe(entries);
    expect(await cached.findReplay(knownRequestOf(call))).toBeNull();
  });

  it('sensitive answers: replayed opened, but every time from the database', async () => {
    const secret = `whsec_${randomUUID()}`;
    const call = anIdempotentCall()
      .withRequestBytes(BYTES)
      .withOperation({ sensitiveResponse: true })
      .executing(() => Promise.resolve({ secret }));
    const entries = cache.size;

    const first = await cached.execute(call.build());
    expect(await cached.findReplay(knownRequestOf(call))).toBeNull();
    const replays = [
      await cached.findStoredReplay(knownRequestOf(call)),
      await cached.findStoredReplay(knownRequestOf(call)),
    ];

    expect(cache.size).toBe(entries);
    expect(cachedRecords.finishedReads).toBe(2);
    expect(replays.map((replay) => replay?.body)).toEqual([first.body, first.body]);
    expect(JSON.parse(first.body)).toEqual({ secret });
  });

  it('a record stored without request bytes (the CLI) is neither kept nor matched', async () => {
    const call = aWritingCall();
    const withoutBytes = call.build();
    delete withoutBytes.requestDigest;
    const entries = cache.size;

    await cached.execute(withoutBytes);

    expect(cache.size).toBe(entries);
    expect(await cached.findReplay(knownRequestOf(call))).toBeNull();
  });
});
