import { randomUUID } from 'node:crypto';
import { DatabasePool } from '@ledgerkey/database';
import { anIdempotentCall } from '../../../test/support/idempotent-call.builder';
import {
  clock,
  effectsOf,
  holdingTheKey,
  latch,
  mustNotRun,
  outcomes,
  PROBLEM_JSON,
  protocol,
  recordOf,
  RejectedForTest,
  stage,
  TTL_SECONDS,
  useProtocolSpec,
  writingEffect,
} from '../../../test/support/protocol-spec';
import { TEST_SEALER } from '../../../test/support/test-sealer';
import { clsProtocolPorts } from './cls-transactions';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from './idempotency.errors';
import type { IdempotencyProtocol } from './idempotency-protocol';

/**
 * The protocol's outcomes other than a first execution or a replay, on real PostgreSQL, wired as
 * the module wires it (test/support/protocol-spec.ts): business rejections (stored, with their
 * races), failures (nothing stored), expiry and sealed answers.
 */
useProtocolSpec((context) => clsProtocolPorts(context.txHost, context.app.get(DatabasePool)));

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
      stage.beforeNextTransaction = async () => {
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
      stage.beforeNextTransaction = async () => {
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
      stage.beforeNextTransaction = async () => {
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
