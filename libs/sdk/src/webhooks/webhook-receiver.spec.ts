import { Webhook } from 'standardwebhooks';
import { WebhookReceiver } from './webhook-receiver';
import { InMemoryWebhookStore } from './webhook-stores';
import { WebhookVerificationError, WebhookVerifier } from './webhook-verifier';

const SECRET = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
const NOW = Date.parse('2026-11-30T12:00:00Z');

const event = {
  id: '0b8c5e4a-1f2d-4c3b-9a8e-7d6c5b4a3f2e',
  object: 'event',
  type: 'invoice.created',
  createdAt: '2026-11-30T12:00:00.000Z',
  data: { object: { id: 'inv_1', grossTotal: 12100 } },
};
const body = JSON.stringify(event);

/** Headers exactly as the server signs (it uses the standardwebhooks package). */
function signed(at = new Date(NOW), payload = body, id = event.id): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(SECRET).sign(id, at, payload),
  };
}

const verifier = new WebhookVerifier(SECRET, { now: () => NOW });

async function failureOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(WebhookVerificationError);
  return (error as WebhookVerificationError).reason;
}

describe('WebhookVerifier (Standard Webhooks)', () => {
  it("accepts the server's signature over the raw body, as a string, bytes or fetch Headers", async () => {
    const verified = await verifier.verify(body, signed());
    expect(verified).toEqual({ webhookId: event.id, timestamp: new Date(NOW), payload: event });
    expect((await verifier.verify(new TextEncoder().encode(body), signed())).payload).toEqual(event);
    expect((await verifier.verify(body, new Headers(signed()))).webhookId).toBe(event.id);
  });

  it('accepts any one matching signature of several (secret rotation)', async () => {
    const headers = signed();
    headers['webhook-signature'] =
      `v1,${Buffer.alloc(32).toString('base64')} ${headers['webhook-signature']}`;
    expect((await verifier.verify(body, headers)).webhookId).toBe(event.id);
  });

  it('refuses a changed body, another id, another secret or a garbled signature', async () => {
    expect(await failureOf(verifier.verify(body.replace('12100', '99999'), signed()))).toBe(
      'invalid_signature',
    );
    expect(await failureOf(verifier.verify(body, { ...signed(), 'webhook-id': 'other' }))).toBe(
      'invalid_signature',
    );
    const other = new WebhookVerifier(
      `whsec_${Buffer.from('another secret of 32 bytes......').toString('base64')}`,
      {
        now: () => NOW,
      },
    );
    expect(await failureOf(other.verify(body, signed()))).toBe('invalid_signature');
    expect(await failureOf(verifier.verify(body, { ...signed(), 'webhook-signature': 'v1,!!!' }))).toBe(
      'invalid_signature',
    );
    expect(await failureOf(verifier.verify(body, { ...signed(), 'webhook-signature': 'v2,abc' }))).toBe(
      'invalid_signature',
    );
  });

  it('refuses a stale or future timestamp beyond the tolerance, and a missing header', async () => {
    expect(await failureOf(verifier.verify(body, signed(new Date(NOW - 301_000))))).toBe(
      'timestamp_out_of_tolerance',
    );
    expect(await failureOf(verifier.verify(body, signed(new Date(NOW + 301_000))))).toBe(
      'timestamp_out_of_tolerance',
    );
    expect((await verifier.verify(body, signed(new Date(NOW - 299_000)))).webhookId).toBe(event.id);
    expect(await failureOf(verifier.verify(body, { ...signed(), 'webhook-timestamp': '12e5' }))).toBe(
      'invalid_timestamp',
    );
    const { 'webhook-signature': _dropped, ...unsigned } = signed();
    expect(await failureOf(verifier.verify(body, unsigned))).toBe('missing_headers');
  });

  it('refuses a secret that is not base64', () => {
    expect(() => new WebhookVerifier('whsec_***')).toThrow(TypeError);
  });
});

describe('WebhookReceiver with the in-memory store', () => {
  it('applies an event delivered concurrently and twice exactly once; a failed handler leaves it to the retry', async () => {
    const receiver = new WebhookReceiver({
      secret: SECRET,
      store: new InMemoryWebhookStore(),
      now: () => NOW,
    });
    let applied = 0;
    let failNext = true;
    const handler = async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (failNext) {
        failNext = false;
        throw new Error('database down');
      }
      applied += 1;
      return applied;
    };

    // The first delivery fails (ledgerkey will retry); concurrent copies wait for it, then one applies.
    const concurrent = await Promise.allSettled(
      Array.from({ length: 5 }, () => receiver.receive(body, signed(), handler)),
    );
    const statuses = concurrent.map((outcome) =>
      outcome.status === 'fulfilled' ? outcome.value.status : 'failed',
    );
    expect(statuses.filter((status) => status === 'failed')).toHaveLength(1);
    expect(statuses.filter((status) => status === 'applied')).toHaveLength(1);
    expect(statuses.filter((status) => status === 'duplicate')).toHaveLength(3);

    for (let i = 0; i < 2; i++) {
      expect((await receiver.receive(body, signed(), handler)).status).toBe('duplicate');
    }
    expect(applied).toBe(1);

    const second = await receiver.receive(
      JSON.stringify({ ...event, id: 'evt_2' }),
      signed(new Date(NOW), JSON.stringify({ ...event, id: 'evt_2' }), 'evt_2'),
      handler,
    );
    expect(second).toMatchObject({ status: 'applied', result: 2 });
  });

  it('runs nothing for a forged delivery', async () => {
    const receiver = new WebhookReceiver({
      secret: SECRET,
      store: new InMemoryWebhookStore(),
      now: () => NOW,
    });
    const handler = jest.fn(async () => undefined);
    await expect(
      receiver.receive(body, { ...signed(), 'webhook-signature': 'v1,AAAA' }, handler),
    ).rejects.toBeInstanceOf(WebhookVerificationError);
    expect(handler).not.toHaveBeenCalled();
  });
});
