import { randomUUID } from 'node:crypto';
import { EventsRepository, type EventType } from '@ledgerkey/outbox';
import { startHandlerContext, type HandlerContext } from '../../../../test/support/handler-context';
import { FanOutEventHandler } from '../fan-out-event/fan-out-event.handler';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';

/**
 * The outbox creates an event's deliveries in the statement that appends it, and dispatchers take
 * due deliveries from their table (docs/decisions/0028-webhook-delivery-from-the-outbox.md, "Webhook delivery from the outbox"). Each
 * test runs in a transaction it rolls back, so no worker of a concurrent suite ever sees its rows.
 */
let ctx: HandlerContext;
let events: EventsRepository;
let deliveries: WebhookDeliveriesRepository;
let fanOut: FanOutEventHandler;

class RolledBack extends Error {}

beforeAll(async () => {
  ctx = await startHandlerContext([], [EventsRepository, WebhookDeliveriesRepository, FanOutEventHandler]);
  events = ctx.app.get(EventsRepository);
  deliveries = ctx.app.get(WebhookDeliveriesRepository);
  fanOut = ctx.app.get(FanOutEventHandler);
});

afterAll(async () => {
  await ctx?.close();
});

/** Runs `work` in a transaction and rolls it back. */
async function rolledBack(work: () => Promise<void>): Promise<void> {
  const ended = await ctx.txHost
    .withTransaction(async () => {
      await work();
      throw new RolledBack();
    })
    .catch((error: unknown) => error);
  // A failed expectation inside surfaces as itself.
  if (!(ended instanceof RolledBack)) throw ended;
}

async function aCompany(): Promise<string> {
  const companyId = randomUUID();
  await ctx.txHost.tx.query(
    `INSERT INTO companies (id, name, country_code, currency) VALUES ($1, 'Jobs', 'LT', 'EUR')`,
    [companyId],
  );
  return companyId;
}

async function anEndpoint(
  companyId: string,
  enabledEvents = ['*'],
  status: 'enabled' | 'disabled' = 'enabled',
): Promise<string> {
  const id = randomUUID();
  await ctx.txHost.tx.query(
    `INSERT INTO webhook_endpoints (id, company_id, url, enabled_events, secret, status, disabled_at)
     VALUES ($1, $2, 'https://example.com/hook', $3, 'whsec_' || repeat('A', 32), $4::text,
             CASE WHEN $4::text = 'disabled' THEN now() END)`,
    [id, companyId, enabledEvents, status],
  );
  return id;
}

function anEvent(companyId: string, type: EventType = 'invoice.created'): Promise<string> {
  return events.append(companyId, type, { createdAt: new Date().toISOString() });
}

async function deliveriesOf(companyId: string): Promise<Array<{ event_id: string; endpoint_id: string }>> {
  return ctx.txHost.tx.query(
    `SELECT event_id, endpoint_id FROM webhook_deliveries WHERE company_id = $1 ORDER BY created_at, endpoint_id`,
    [companyId],
  );
}

it('appending an event creates a delivery per enabled endpoint subscribed to its type, and queues no job', async () => {
  await rolledBack(async () => {
    const companyId = await aCompany();
    const all = await anEndpoint(companyId);
    const invoices = await anEndpoint(companyId, ['invoice.created']);
    await anEndpoint(companyId, ['credit_note.created']);
    await anEndpoint(companyId, ['*'], 'disabled');
    const other = await aCompany();
    await anEndpoint(other);

    const eventId = await anEvent(companyId);
    expect(await deliveriesOf(companyId)).toEqual(
      expect.arrayContaining([
        { event_id: eventId, endpoint_id: all },
        { event_id: eventId, endpoint_id: invoices },
      ]),
    );
    expect(await deliveriesOf(companyId)).toHaveLength(2);
    expect(await deliveriesOf(other)).toEqual([]);
    const jobs = await ctx.txHost.tx.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM graphile_worker.jobs WHERE key LIKE '%' || $1`,
      [eventId],
    );
    expect(jobs[0].count).toBe(0);
  });
});

it('a company without endpoints gets its event and no delivery', async () => {
  await rolledBack(async () => {
    const companyId = await aCompany();
    await anEvent(companyId);
    await anEvent(companyId, 'payment.succeeded');
    expect(await deliveriesOf(companyId)).toEqual([]);
  });
});

it('a fan-out job of the previous version fans out an event once, also without its company', async () => {
  await rolledBack(async () => {
    const companyId = await aCompany();
    // An event appended before the endpoint existed gets no delivery from the append ...
    const eventId = await anEvent(companyId);
    await anEndpoint(companyId);
    expect(await deliveriesOf(companyId)).toEqual([]);
    // ... a job naming it (as the previous version queued) creates one, then nothing twice.
    expect(await fanOut.execute(undefined, eventId)).toBe(1);
    expect(await fanOut.execute(companyId, eventId)).toBe(0);
    expect(await fanOut.execute(undefined, randomUUID())).toBe(0);
    // Keyed by (company, id): under another company the event is not found.
    expect(await deliveries.fanOut(await aCompany(), eventId)).toBe(0);
  });
});

it('leaseDue takes due, unleased deliveries oldest first, counts the attempt, cancels those of disabled endpoints', async () => {
  await rolledBack(async () => {
    const companyId = await aCompany();
    const endpoint = await anEndpoint(companyId);
    const disabled = await anEndpoint(companyId);
    const [first, second, notDue] = [
      await anEvent(companyId),
      await anEvent(companyId),
      await anEvent(companyId),
    ];
    await ctx.txHost.tx.query(
      `UPDATE webhook_endpoints SET status = 'disabled', disabled_at = now() WHERE company_id = $1 AND id = $2`,
      [companyId, disabled],
    );
    // Due long ago, so other suites' due deliveries (if any) come after them. Three due rows for
    // a limit of three: the second event's delivery to the disabled endpoint is not due (four
    // would tie on the second event's time, and the limit would take either).
    await ctx.txHost.tx.query(
      `UPDATE webhook_deliveries
          SET next_attempt_at = CASE WHEN event_id = $2 THEN '2000-01-01'::timestamptz
                                     WHEN event_id = $3 AND endpoint_id <> $4 THEN '2000-01-02'::timestamptz
                                     ELSE now() + interval '1 hour' END
        WHERE company_id = $1`,
      [companyId, first, second, disabled],
    );

    const taken = await deliveries.leaseDue(3, 60_000);
    // At least ours: due deliveries of other suites' disabled endpoints (committed, so visible
    // here) may be canceled by the same call; this company's own rows are counted exactly below.
    expect(taken.canceled).toBeGreaterThanOrEqual(1);
    expect(
      taken.leased.map(({ eventId, endpointId, attemptNumber }) => ({ eventId, endpointId, attemptNumber })),
    ).toEqual([
      { eventId: first, endpointId: endpoint, attemptNumber: 1 },
      { eventId: second, endpointId: endpoint, attemptNumber: 1 },
    ]);
    expect(taken.leased[0].leaseToken).not.toBe(taken.leased[1].leaseToken);
    const rows = await ctx.txHost.tx.query<{
      event_id: string;
      endpoint_id: string;
      status: string;
      leased: boolean;
      attempt_count: number;
    }>(
      `SELECT event_id, endpoint_id, status, leased_until > now() AS leased, attempt_count
         FROM webhook_deliveries WHERE company_id = $1`,
      [companyId],
    );
    const byKey = (eventId: string, endpointId: string) =>
      rows.find((row) => row.event_id === eventId && row.endpoint_id === endpointId);
    expect(byKey(first, endpoint)).toMatchObject({ status: 'pending', leased: true, attempt_count: 1 });
    expect(byKey(notDue, endpoint)).toMatchObject({ status: 'pending', leased: null, attempt_count: 0 });
    expect(rows.filter((row) => row.status === 'canceled')).toHaveLength(1);

    // Leased deliveries are not taken again.
    const again = await deliveries.leaseDue(50, 60_000);
    expect(again.leased.filter((delivery) => delivery.companyId === companyId)).toEqual([]);
  });
});

it('recordAttempt of a retry makes the delivery due after the delay; the sweeper abandons an expired lease', async () => {
  await rolledBack(async () => {
    const companyId = await aCompany();
    await anEndpoint(companyId);
    await anEvent(companyId);
    await ctx.txHost.tx.query(
      `UPDATE webhook_deliveries SET next_attempt_at = '2000-01-01' WHERE company_id = $1`,
      [companyId],
    );
    const [delivery] = (await deliveries.leaseDue(1, 60_000)).leased;
    expect(delivery.companyId).toBe(companyId);
    const outcome = { statusCode: 503, durationMs: 5, error: 'HTTP 503', succeeded: false };
    expect(await deliveries.recordAttempt(delivery, outcome, { kind: 'retry', delayMs: 3_600_000 })).toBe(
      true,
    );
    const [retry] = await ctx.txHost.tx.query<{ status: string; due_in_minutes: number }>(
      `SELECT status, round(extract(epoch FROM next_attempt_at - now()) / 60)::int AS due_in_minutes
         FROM webhook_deliveries WHERE company_id = $1`,
      [companyId],
    );
    expect(retry).toEqual({ status: 'pending', due_in_minutes: 60 });
    // A second record under the same (now released) lease changes nothing.
    expect(await deliveries.recordAttempt(delivery, outcome, { kind: 'delivered' })).toBe(false);

    // Leased again, then its worker dies: the lease expires and the sweep records the attempt.
    await ctx.txHost.tx.query(
      `UPDATE webhook_deliveries SET next_attempt_at = '2000-01-01' WHERE company_id = $1`,
      [companyId],
    );
    const [second] = (await deliveries.leaseDue(1, 60_000)).leased;
    expect(second).toMatchObject({ deliveryId: delivery.deliveryId, attemptNumber: 2 });
    await ctx.txHost.tx.query(
      `UPDATE webhook_deliveries SET leased_until = now() - interval '1 second' WHERE company_id = $1`,
      [companyId],
    );
    expect((await deliveries.sweep(2)).abandoned).toBeGreaterThanOrEqual(1);
    const [swept] = await ctx.txHost.tx.query<{ status: string; leased_until: Date | null }>(
      `SELECT status, leased_until FROM webhook_deliveries WHERE company_id = $1`,
      [companyId],
    );
    // Two attempts of a schedule of one retry: that was the last.
    expect(swept).toEqual({ status: 'failed', leased_until: null });
    const attempts = await ctx.txHost.tx.query<{ attempt_number: number; result: string }>(
      `SELECT attempt_number, result FROM webhook_attempts WHERE company_id = $1 ORDER BY attempt_number`,
      [companyId],
    );
    expect(attempts).toEqual([
      { attempt_number: 1, result: 'failed' },
      { attempt_number: 2, result: 'abandoned' },
    ]);
  });
});
