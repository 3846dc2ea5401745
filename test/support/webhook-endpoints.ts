import { JobRunner } from '@ledgerkey/jobs';
import { anInvoice, newKey } from './invoice.builder';
import { startTestApp, type TestApp, type TestCompany } from './test-app';
import { testDatabaseUrl } from './test-database';
import { WebhookReceiver, type WebhookReceiverBehaviour } from './webhook-receiver';

/** What the webhook e2e specs share: endpoint registration, and an app whose worker delivers. */

export const CREATE_ENDPOINT = '/v1/webhook-endpoints/create';

/** Every 8-character piece of the secret's random part: none may appear where it is stored. */
export function piecesOf(secret: string): string[] {
  const random = secret.slice('whsec_'.length);
  return Array.from({ length: random.length - 7 }, (_, index) => random.slice(index, index + 8));
}
export const DELIVERY_TIMEOUT_MS = 20_000;

export interface EndpointBody {
  id: string;
  url: string;
  secret?: string;
  status: string;
}

export async function registerEndpoint(
  t: TestApp,
  company: TestCompany,
  body: Record<string, unknown>,
  key = newKey('endpoint'),
): Promise<{
  status: number;
  body: EndpointBody & Record<string, unknown>;
  headers: Record<string, string>;
}> {
  const response = await t.http
    .post(CREATE_ENDPOINT)
    .set(company.auth)
    .set('Idempotency-Key', key)
    .send(body);
  return {
    status: response.status,
    body: response.body,
    headers: response.headers as Record<string, string>,
  };
}

/** The application with its worker running in-process: private targets allowed, short retries and leases. */
export async function startDeliveryApp(): Promise<TestApp> {
  const t = await startTestApp({
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '1,1,1',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_LEASE_SECONDS: '5',
    WEBHOOK_SWEEP_INTERVAL_MS: '500',
  });
  await t.app.get(JobRunner).start({ connectionString: testDatabaseUrl(), concurrency: 4 });
  return t;
}

/** Receivers (closed by the spec's afterAll), invoices and their events on the spec's app (`ctx()`). */
export function deliveryCalls(ctx: () => { t: TestApp; receivers: WebhookReceiver[] }) {
  async function receiver(behaviour: WebhookReceiverBehaviour = {}): Promise<WebhookReceiver> {
    const { receivers } = ctx();
    const started = await WebhookReceiver.start(behaviour);
    receivers.push(started);
    return started;
  }

  async function issueInvoice(
    company: TestCompany,
    key = newKey('invoice'),
  ): Promise<{ id: string; text: string }> {
    const { t } = ctx();
    const response = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', key)
      .send(anInvoice().withLine().build());
    expect(response.status).toBe(201);
    return { id: response.body.id, text: response.text };
  }

  async function eventOf(company: TestCompany, invoiceId: string): Promise<{ id: string; text: string }> {
    const { t } = ctx();
    // The list holds an event back while an older transaction (e.g. the worker's) still runs.
    const deadline = Date.now() + 5000;
    let event: { id: string } | undefined;
    while (!event && Date.now() < deadline) {
      const events = await t.http.get('/v1/events?limit=100').set(company.auth);
      event = (events.body.data as Array<{ id: string; data: { object: { id: string } } }>).find(
        (candidate) => candidate.data.object.id === invoiceId,
      );
      if (!event) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (!event) throw new Error(`no event for invoice ${invoiceId}`);
    const single = await t.http.get(`/v1/events/${event.id}`).set(company.auth);
    return { id: event.id, text: single.text };
  }

  return { receiver, issueInvoice, eventOf };
}
