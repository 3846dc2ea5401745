import { DatabasePool } from '@ledgerkey/database';
import {
  aCall,
  anEffect,
  type Answer,
  clock,
  ctx,
  held,
  LEASE_SECONDS,
  OPERATION,
  operationsOf,
  outcomes,
  protocol,
  recordOf,
  RefusedForTest,
  refOf,
  unknown,
  useExternalEffectSpec,
} from '../../../test/support/external-effect-spec';
import { anIdempotentCall } from '../../../test/support/idempotent-call.builder';
import { clsProtocolPorts } from './cls-transactions';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from './idempotency.errors';

/**
 * The protocol for effects outside the database, on real PostgreSQL without HTTP, wired as the
 * module wires it (test/support/external-effect-spec.ts has the scripted effects and the readers).
 */
useExternalEffectSpec((context) => clsProtocolPorts(context.txHost, context.app.get(DatabasePool)));

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
