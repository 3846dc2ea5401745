import { randomUUID } from 'node:crypto';
import { startHandlerContext, type HandlerContext } from '../../../test/support/handler-context';
import { TestClock } from '../../../test/support/test-clock';
import { DatabasePool } from '@ledgerkey/database';
import { clsTransactionalSql, clsTransactionRunner } from './cls-transactions';
import { fingerprintOf } from './fingerprint';
import { IdempotencyKeyInUseError, IdempotencyLeaseLostError } from './idempotency.errors';
import type { FinishedOutcome, KeyClaim, TransactionRunner } from './idempotency-ports';
import type { IdempotencyKeyRef, Lease, UnfinishedRecord } from './idempotency-record';
import { IdempotencyRecordRepository } from './idempotency-record.repository';
import { decide, type KeyDecision } from './idempotency-state-machine';

/**
 * The persisted states and their transitions on real PostgreSQL: what an operation with an
 * external effect (a payment) will do — commit `in_progress` with a lease before the external
 * call, finish later, be taken over once its lease expired — plus the schema's guarantees.
 */
const LEASE_SECONDS = 30;
const TTL_SECONDS = 3600;
const FINGERPRINT = fingerprintOf({ invoiceId: 'inv_1', amount: 12100 });

let ctx: HandlerContext;
let records: IdempotencyRecordRepository;
let transactions: TransactionRunner;
let clock: TestClock;

beforeAll(async () => {
  ctx = await startHandlerContext();
  records = new IdempotencyRecordRepository(clsTransactionalSql(ctx.txHost), ctx.app.get(DatabasePool));
  transactions = clsTransactionRunner(ctx.txHost);
});

beforeEach(() => {
  clock = new TestClock();
});

afterAll(async () => {
  await ctx?.close();
});

function aKey(): IdempotencyKeyRef {
  return { tenantId: randomUUID(), operation: 'test.payments.create', key: `key-${randomUUID()}` };
}

function secondsFromNow(seconds: number): Date {
  return new Date(clock.now().getTime() + seconds * 1000);
}

function inTransaction<T>(work: () => Promise<T>): Promise<T> {
  return transactions.run(work);
}

async function claimed(
  ref: IdempotencyKeyRef,
  fingerprint = FINGERPRINT,
): Promise<{ claim: KeyClaim; decision: KeyDecision }> {
  return inTransaction(async () => {
    const claim = await records.claim(ref, clock.now());
    return { claim, decision: decide(claim, fingerprint, clock.now()) };
  });
}

/** no record → in_progress (attempt 1), committed: what happens before an external call. */
function begin(ref: IdempotencyKeyRef, recoveryPoint = 'payment_created'): Promise<Lease> {
  return inTransaction(async () => {
    const claim = await records.claim(ref, clock.now());
    expect(decide(claim, FINGERPRINT, clock.now())).toEqual({ action: 'execute' });
    return records.begin(
      ref,
      {
        fingerprint: FINGERPRINT,
        leaseExpiresAt: secondsFromNow(LEASE_SECONDS),
        recoveryPoint,
        expiresAt: secondsFromNow(TTL_SECONDS),
      },
      clock.now(),
    );
  });
}

/** Claims, expects `resume`, and takes the operation over. */
function takeOver(ref: IdempotencyKeyRef): Promise<{ record: UnfinishedRecord; lease: Lease | null }> {
  return inTransaction(async () => {
    const claim = await records.claim(ref, clock.now());
    const decision = decide(claim, FINGERPRINT, clock.now());
    if (decision.action !== 'resume') throw new Error(`expected resume, got ${decision.action}`);
    const lease = await records.takeOver(ref, decision.record, secondsFromNow(LEASE_SECONDS), clock.now());
    return { record: decision.record, lease };
  });
}

function outcome(status: number, state: FinishedOutcome['state'] = 'completed'): FinishedOutcome {
  return {
    state,
    response: {
      status,
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ status }),
      sealed: false,
    },
    expiresAt: secondsFromNow(TTL_SECONDS),
  };
}

async function rowOf(ref: IdempotencyKeyRef): Promise<Record<string, unknown> | undefined> {
  const { rows } = await ctx.db.query(
    `SELECT state, attempt, lease_expires_at, recovery_point, response_status, response_body, expires_at
       FROM idempotency_records WHERE company_id = $1 AND operation = $2 AND idempotency_key = $3`,
    [ref.tenantId, ref.operation, ref.key],
  );
  return rows[0] as Record<string, unknown> | undefined;
}

describe('in_progress with a lease', () => {
  it('begin commits in_progress, attempt 1, the lease and the recovery point, and no answer', async () => {
    const ref = aKey();
    const lease = await begin(ref);

    expect(lease).toEqual({ attempt: 1, expiresAt: secondsFromNow(LEASE_SECONDS) });
    expect(await rowOf(ref)).toEqual({
      state: 'in_progress',
      attempt: 1,
      lease_expires_at: secondsFromNow(LEASE_SECONDS),
      recovery_point: 'payment_created',
      response_status: null,
      response_body: null,
      expires_at: secondsFromNow(TTL_SECONDS),
    });
  });

  it('while the lease runs, a retry is busy, read without the lock; another payload is a mismatch', async () => {
    const ref = aKey();
    await begin(ref);
    clock.advance(LEASE_SECONDS - 1);

    const { claim, decision } = await claimed(ref);
    expect(claim).toMatchObject({ held: false, record: { state: 'in_progress', attempt: 1 } });
    expect(decision).toEqual({ action: 'reject_busy' });
    expect((await claimed(ref, fingerprintOf({ other: true }))).decision).toEqual({
      action: 'reject_mismatch',
    });
  });

  it('checkpoint records the recovery point reached and extends the lease', async () => {
    const ref = aKey();
    const lease = await begin(ref);
    clock.advance(LEASE_SECONDS - 5);

    const extended = await inTransaction(() =>
      records.checkpoint(ref, lease, 'charge_requested', secondsFromNow(LEASE_SECONDS), clock.now()),
    );
    clock.advance(10);

    expect(extended).toEqual({
      attempt: 1,
      expiresAt: new Date(clock.now().getTime() + (LEASE_SECONDS - 10) * 1000),
    });
    expect(await rowOf(ref)).toMatchObject({ state: 'in_progress', recovery_point: 'charge_requested' });
    expect((await claimed(ref)).decision).toEqual({ action: 'reject_busy' });
  });

  it('finish stores the answer as completed; from then on every retry replays without the lock', async () => {
    const ref = aKey();
    const lease = await begin(ref);
    clock.advance(5);

    await inTransaction(() => records.finish(ref, lease, outcome(201), clock.now()));

    expect(await rowOf(ref)).toMatchObject({
      state: 'completed',
      lease_expires_at: null,
      response_status: 201,
      expires_at: secondsFromNow(TTL_SECONDS),
    });
    const { claim, decision } = await claimed(ref);
    expect(claim.held).toBe(false);
    expect(decision).toMatchObject({ action: 'replay', record: { state: 'completed', attempt: 1 } });
  });

  it('finish as failed_final stores the final failure, which replays like a success', async () => {
    const ref = aKey();
    const lease = await begin(ref);

    await inTransaction(() => records.finish(ref, lease, outcome(422, 'failed_final'), clock.now()));

    expect(await rowOf(ref)).toMatchObject({ state: 'failed_final', response_status: 422 });
    expect((await claimed(ref)).decision).toMatchObject({
      action: 'replay',
      record: { state: 'failed_final', response: { status: 422 } },
    });
  });
});

describe('taking over', () => {
  it('after the lease expired, a retry holds the key and resumes: attempt 2, a new lease; the old holder can no longer write', async () => {
    const ref = aKey();
    const first = await begin(ref);
    clock.advance(LEASE_SECONDS);

    const { record, lease } = await takeOver(ref);

    expect(record).toMatchObject({ state: 'in_progress', attempt: 1, recoveryPoint: 'payment_created' });
    expect(lease).toEqual({ attempt: 2, expiresAt: secondsFromNow(LEASE_SECONDS) });
    expect(await rowOf(ref)).toMatchObject({ state: 'in_progress', attempt: 2 });
    await expect(
      inTransaction(() => records.finish(ref, first, outcome(201), clock.now())),
    ).rejects.toBeInstanceOf(IdempotencyLeaseLostError);
    await expect(
      inTransaction(() => records.checkpoint(ref, first, 'late', secondsFromNow(LEASE_SECONDS), clock.now())),
    ).rejects.toBeInstanceOf(IdempotencyLeaseLostError);
    await expect(
      inTransaction(() => records.failRetryable(ref, first, null, clock.now())),
    ).rejects.toBeInstanceOf(IdempotencyLeaseLostError);

    await inTransaction(() => records.finish(ref, lease!, outcome(201), clock.now()));
    expect(await rowOf(ref)).toMatchObject({ state: 'completed', attempt: 2 });
  });

  it('two requests that both saw the expired lease cannot both take over (the attempt fences them)', async () => {
    const ref = aKey();
    await begin(ref);
    clock.advance(LEASE_SECONDS + 1);
    const { record } = await takeOver(ref);

    const second = await inTransaction(() =>
      records.takeOver(ref, record, secondsFromNow(LEASE_SECONDS), clock.now()),
    );

    expect(second).toBeNull();
    expect(await rowOf(ref)).toMatchObject({ attempt: 2 });
  });

  it('a take-over needs the key lock: while another transaction holds it, the retry is busy', async () => {
    const ref = aKey();
    await begin(ref);
    clock.advance(LEASE_SECONDS);
    const holder = await ctx.db.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
        `${ref.tenantId}\n${ref.operation}\n${ref.key}`,
      ]);
      expect(await claimed(ref)).toEqual({
        claim: { held: false, record: null },
        decision: { action: 'reject_busy' },
      });
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
  });

  it('failed_retryable frees the key at once: the next claim resumes from the recovery point, no lease to wait for', async () => {
    const ref = aKey();
    const lease = await begin(ref);
    await inTransaction(() =>
      records.checkpoint(ref, lease, 'charge_requested', secondsFromNow(LEASE_SECONDS), clock.now()),
    );

    await inTransaction(() => records.failRetryable(ref, lease, null, clock.now()));

    expect(await rowOf(ref)).toMatchObject({
      state: 'failed_retryable',
      lease_expires_at: null,
      recovery_point: 'charge_requested',
      response_status: null,
    });
    const { record, lease: next } = await takeOver(ref);
    expect(record).toMatchObject({ state: 'failed_retryable', recoveryPoint: 'charge_requested' });
    expect(next).toMatchObject({ attempt: 2 });
  });

  it('an unfinished operation never expires into a new key: long after its window it is resumed, not executed again', async () => {
    const ref = aKey();
    await begin(ref);
    clock.advance(TTL_SECONDS * 2);

    expect((await claimed(ref)).decision).toMatchObject({ action: 'resume' });
  });
});

describe('finished records', () => {
  it('a finished record past its window is deleted under the lock: the key is new', async () => {
    const ref = aKey();
    await inTransaction(() =>
      records.insertFinished(
        ref,
        { ...outcome(201), expiresAt: secondsFromNow(1), fingerprint: FINGERPRINT, requestDigest: null },
        clock.now(),
      ),
    );
    clock.advance(1);

    const { claim, decision } = await claimed(ref, fingerprintOf({ another: 'payload' }));

    expect(claim).toEqual({ held: true, record: null });
    expect(decision).toEqual({ action: 'execute' });
    expect(await rowOf(ref)).toBeUndefined();
  });

  it('a second record for the key (the lock bypassed) is refused as in use', async () => {
    const ref = aKey();
    await expect(
      inTransaction(async () => {
        await records.insertFinished(
          ref,
          { ...outcome(201), fingerprint: FINGERPRINT, requestDigest: null },
          clock.now(),
        );
        await records.insertFinished(
          ref,
          { ...outcome(201), fingerprint: FINGERPRINT, requestDigest: null },
          clock.now(),
        );
      }),
    ).rejects.toBeInstanceOf(IdempotencyKeyInUseError);
    expect(await rowOf(ref)).toBeUndefined();
  });
});

describe('guards', () => {
  it('the store runs inside a transaction only', async () => {
    await expect(records.claim(aKey(), clock.now())).rejects.toThrow(/inside a transaction/);
  });

  it.each([
    ['completed without an answer', `'completed', NULL, NULL, NULL, NULL`, 'ck_idempotency_records_response'],
    [
      'failed_final without an answer',
      `'failed_final', NULL, NULL, NULL, NULL`,
      'ck_idempotency_records_response',
    ],
    ['in_progress without a lease', `'in_progress', NULL, NULL, NULL, NULL`, 'ck_idempotency_records_lease'],
    [
      'in_progress with an answer',
      `'in_progress', 201, '{}', '{}', now()`,
      'ck_idempotency_records_response',
    ],
    ['completed with a lease', `'completed', 201, '{}', '{}', now()`, 'ck_idempotency_records_lease'],
    [
      'failed_retryable with an answer',
      `'failed_retryable', 500, '{}', '{}', NULL`,
      'ck_idempotency_records_response',
    ],
    ['an unknown state', `'pending', NULL, NULL, NULL, NULL`, 'ck_idempotency_records_state'],
  ])('the schema refuses %s', async (_name, values, constraint) => {
    const ref = aKey();
    await expect(
      ctx.db.query(
        `INSERT INTO idempotency_records (company_id, operation, idempotency_key, fingerprint, state,
                                          response_status, response_headers, response_body, lease_expires_at,
                                          expires_at)
         VALUES ($1, $2, $3, $4, ${values}, now() + interval '1 day')`,
        [ref.tenantId, ref.operation, ref.key, FINGERPRINT],
      ),
    ).rejects.toMatchObject({ code: '23514', constraint });
  });
});
