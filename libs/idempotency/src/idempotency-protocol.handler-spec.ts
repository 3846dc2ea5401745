import { DatabasePool } from '@ledgerkey/database';
import { anIdempotentCall, type IdempotentCallBuilder } from '../../../test/support/idempotent-call.builder';
import {
  classifier,
  clock,
  ctx,
  effectsOf,
  holdingTheKey,
  keyIsFree,
  latch,
  mustNotRun,
  outcomes,
  protocol,
  recordOf,
  RejectedForTest,
  TTL_SECONDS,
  useProtocolSpec,
  whileLockHeld,
  writingEffect,
} from '../../../test/support/protocol-spec';
import { clsProtocolPorts, clsTransactionRunner } from './cls-transactions';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from './idempotency.errors';
import type { TransactionRunner } from './idempotency-ports';
import { IdempotencyProtocol } from './idempotency-protocol';

/**
 * The protocol on real PostgreSQL, wired as the module wires it, without HTTP: first use,
 * replays, busy keys, the claim (test/support/protocol-spec.ts; rejections, failures, expiry and
 * sealing in idempotency-protocol-outcomes.handler-spec.ts).
 */
useProtocolSpec((context) => clsProtocolPorts(context.txHost, context.app.get(DatabasePool)));

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

describe("a new key's claim comes before the operation", () => {
  it('the key is held before the operation runs, until the commit', async () => {
    const call = anIdempotentCall();
    const seen: boolean[] = [];
    const observed = call.executing(async () => {
      seen.push(await keyIsFree(call));
      const written = await writingEffect(call).build().execute();
      seen.push(await keyIsFree(call));
      return written;
    });

    expect((await protocol.execute(observed.build())).outcome).toBe('executed');

    expect(seen).toEqual([false, false]);
    expect(await keyIsFree(call)).toBe(true);
    expect(await effectsOf(call)).toBe(1);
  });

  it('an operation without statements claims the key all the same', async () => {
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

  it('a finished key, retried with other bytes: nothing runs, the answer is the replay', async () => {
    const call = writingEffect(anIdempotentCall());
    const first = await protocol.execute(call.build());

    // Other bytes of the same payload: no findReplay, so the operation starts.
    const retry = await protocol.execute(call.withRequestBytes(' {}').build());

    expect(retry).toMatchObject({ outcome: 'replayed', body: first.body });
    expect(await effectsOf(call)).toBe(1);
    expect(outcomes).toEqual(['executed', 'replayed']);
  });

  it('a key held by another transaction: 409, nothing written', async () => {
    const call = writingEffect(anIdempotentCall());

    await whileLockHeld(call, () =>
      expect(protocol.execute(call.build())).rejects.toBeInstanceOf(IdempotencyKeyInUseError),
    );

    expect(await effectsOf(call)).toBe(0);
    expect(await recordOf(call)).toBeUndefined();
    expect(outcomes).toEqual(['in_flight']);
  });

  it('a business rejection on a key another request holds → 409; its result stands', async () => {
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

describe('one transaction per request', () => {
  it('claims, runs and records in the one transaction of the operation', async () => {
    let transactionsRun = 0;
    const counting: TransactionRunner = {
      run: (work) => {
        transactionsRun += 1;
        return clsTransactionRunner(ctx.txHost).run(work);
      },
    };
    const claimingFirst = new IdempotencyProtocol({
      ttlSeconds: TTL_SECONDS,
      transactions: counting,
      records: clsProtocolPorts(ctx.txHost, ctx.app.get(DatabasePool)).records,
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
