import { Webhook } from 'standardwebhooks';
import {
  aSandboxCharge,
  eventually,
  SandboxHttp,
  startTestSandbox,
  stopAllSandboxes,
} from '../support/provider-sandbox';
import { WebhookReceiver } from '../support/webhook-receiver';

jest.setTimeout(60_000);

const WEBHOOK_SECRET = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;

async function allEventsDelivered(http: SandboxHttp): Promise<void> {
  await eventually(async () => {
    const { body } = await http.call('GET', '/_sandbox/counters');
    return body.events.pending === 0 ? true : undefined;
  });
}

/** Makes `count` charges, each after the previous one was answered; their references in order. */
async function chargeOneAfterAnother(http: SandboxHttp, count: number): Promise<string[]> {
  const references: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const params = aSandboxCharge();
    references.push(params.reference);
    await http.createCharge(params);
  }
  return references;
}

afterAll(stopAllSandboxes);

describe('provider sandbox: webhooks', () => {
  let receiver: WebhookReceiver;
  afterEach(async () => {
    await receiver.close();
  });

  it('sends each event signed per Standard Webhooks, with exactly the documented body, in order', async () => {
    receiver = await WebhookReceiver.start();
    const sandbox = await startTestSandbox({ webhookUrl: receiver.url(), webhookSecret: WEBHOOK_SECRET });
    const http = new SandboxHttp(sandbox);
    const metadata = { companyId: 'company-hooks', paymentId: 'pay-1' };
    const { body: charge } = await http.createCharge(aSandboxCharge({ metadata }));
    await http.createCharge(aSandboxCharge({ paymentMethod: 'pm_card_declined', metadata }));
    await http.call('POST', `/v1/charges/${charge.id}/refunds`, {
      body: { amount: 10 },
      idempotencyKey: 'hook-refund',
    });
    const { body: payouts } = await http.call('POST', '/v1/payouts', {
      body: { companyId: 'company-hooks' },
    });
    await receiver.waitFor((requests) => requests.length >= 4, 10_000);

    const events = receiver.requests.map((request) => {
      const verified = new Webhook(WEBHOOK_SECRET).verify(request.body, request.headers) as { id: string };
      expect(request.headers['webhook-id']).toBe(verified.id);
      return JSON.parse(request.body) as {
        id: string;
        type: string;
        createdAt: string;
        data: Record<string, unknown>;
      };
    });
    expect(events.map((event) => event.type)).toEqual([
      'charge.succeeded',
      'charge.failed',
      'charge.refunded',
      'payout.paid',
    ]);
    for (const event of events)
      expect(Object.keys(event).sort()).toEqual(['createdAt', 'data', 'id', 'type']);
    expect(events[0].data).toEqual(charge);
    expect(events[1].data).toMatchObject({ status: 'failed', failureCode: 'card_declined', metadata });
    expect(events[2].data).toMatchObject({ id: charge.id, refundedAmount: 10, status: 'succeeded' });
    expect(events[3].data).toEqual(payouts.data[0]);
    expect(Object.keys(events[3].data).sort()).toEqual([
      'amount',
      'charges',
      'companyId',
      'currency',
      'feeAmount',
      'id',
      'paidAt',
    ]);
    await allEventsDelivered(http);
    await sandbox.stop();
  });

  it('retries an event with backoff until a 2xx, with the same id and body', async () => {
    receiver = await WebhookReceiver.start({ failFirst: 3 });
    const sandbox = await startTestSandbox({ webhookUrl: receiver.url(), webhookSecret: WEBHOOK_SECRET });
    const http = new SandboxHttp(sandbox);
    await http.createCharge(aSandboxCharge());
    await receiver.waitFor((requests) => requests.some((request) => request.answer === 200), 10_000);
    expect(receiver.requests.map((request) => request.answer)).toEqual([500, 500, 500, 200]);
    expect(new Set(receiver.requests.map((request) => request.headers['webhook-id'])).size).toBe(1);
    expect(new Set(receiver.requests.map((request) => request.body)).size).toBe(1);
    const gaps = receiver.requests
      .slice(1)
      .map((request, index) => request.receivedAt.getTime() - receiver.requests[index].receivedAt.getTime());
    expect(gaps[2]).toBeGreaterThan(gaps[0]);
    // The receiver answers before the sandbox records that answer.
    await allEventsDelivered(http);
    const { body } = await http.call('GET', '/_sandbox/events');
    expect(body.data[0]).toMatchObject({ attempts: 4, delivered: 1, copies: 1, lastError: null });
    await sandbox.stop();
  });

  it('delivers some events twice with duplicate_webhook, the same ones for the same seed', async () => {
    receiver = await WebhookReceiver.start();
    const deliveriesPerCharge = async (path: string): Promise<number[]> => {
      const sandbox = await startTestSandbox({
        webhookUrl: receiver.url(path),
        webhookSecret: WEBHOOK_SECRET,
        faults: 'duplicate_webhook=0.5',
        seed: 1234,
      });
      const http = new SandboxHttp(sandbox);
      const references = await chargeOneAfterAnother(http, 12);
      await allEventsDelivered(http);
      const { body: counters } = await http.call('GET', '/_sandbox/counters');
      const requests = receiver.requests.filter((request) => request.path === path);
      expect(requests).toHaveLength(12 + counters.faultsInjected.duplicateWebhook);
      const counts = references.map((reference) => {
        const copies = requests.filter((request) => JSON.parse(request.body).data.reference === reference);
        expect(new Set(copies.map((copy) => copy.headers['webhook-id'])).size).toBe(1);
        expect(new Set(copies.map((copy) => copy.body)).size).toBe(1);
        return copies.length;
      });
      await sandbox.stop();
      return counts;
    };
    const first = await deliveriesPerCharge('/first');
    expect(first).toContain(1);
    expect(first).toContain(2);
    expect(await deliveriesPerCharge('/second')).toEqual(first);
  });

  it('delivers events out of order with reorder_webhooks, each still delivered', async () => {
    receiver = await WebhookReceiver.start();
    const sandbox = await startTestSandbox({
      webhookUrl: receiver.url(),
      webhookSecret: WEBHOOK_SECRET,
      faults: 'reorder_webhooks=true,webhook_delay_ms=800',
      seed: 99,
    });
    const http = new SandboxHttp(sandbox);
    const references = await chargeOneAfterAnother(http, 10);
    await allEventsDelivered(http);
    const arrived = receiver.requests.map((request) => JSON.parse(request.body).data.reference as string);
    expect([...arrived].sort()).toEqual([...references].sort());
    expect(arrived).not.toEqual(references);
    await sandbox.stop();
  });
});
