import { randomUUID } from 'node:crypto';
import { EventsRepository } from '@ledgerkey/outbox';
import { startHandlerContext, type HandlerContext } from '../../../../test/support/handler-context';
import { FanOutEventHandler } from '../fan-out-event/fan-out-event.handler';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';

/**
 * Worker jobs name the company (docs/scaling.md, "What that requires of the statements"): the
 * fan-out and delivery statements then read by (company_id, id), the tables' keys. Each test runs
 * in a transaction it rolls back, so no worker of a concurrent suite ever sees its jobs.
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
  await expect(
    ctx.txHost.withTransaction(async () => {
      await work();
      throw new RolledBack();
    }),
  ).rejects.toBeInstanceOf(RolledBack);
}

async function aCompanyWithEndpoint(): Promise<string> {
  const companyId = randomUUID();
  await ctx.txHost.tx.query(
    `INSERT INTO companies (id, name, country_code, currency) VALUES ($1, 'Jobs', 'LT', 'EUR')`,
    [companyId],
  );
  await ctx.txHost.tx.query(
    `INSERT INTO webhook_endpoints (id, company_id, url, enabled_events, secret)
     VALUES ($1, $2, 'https://example.com/hook', '{*}', 'whsec_' || repeat('A', 32))`,
    [randomUUID(), companyId],
  );
  return companyId;
}

async function payloadOf(jobKey: string): Promise<unknown> {
  const rows = await ctx.txHost.tx.query<Array<{ payload: unknown }>>(
    `SELECT payload FROM graphile_worker._private_jobs WHERE key = $1`,
    [jobKey],
  );
  return rows[0]?.payload;
}

it('the fan-out job of an event and the delivery jobs it queues name the company', async () => {
  await rolledBack(async () => {
    const companyId = await aCompanyWithEndpoint();
    const eventId = await events.append(companyId, 'invoice.created', {
      createdAt: new Date().toISOString(),
    });
    expect(await payloadOf(`fan_out:${eventId}`)).toEqual({ companyId, eventId });

    expect(await deliveries.fanOut(companyId, eventId)).toBe(1);
    const [delivery] = await ctx.txHost.tx.query<Array<{ id: string }>>(
      `SELECT id FROM webhook_deliveries WHERE company_id = $1 AND event_id = $2`,
      [companyId, eventId],
    );
    expect(await payloadOf(`deliver:${delivery.id}`)).toEqual({ companyId, deliveryId: delivery.id });
    // Run again (a fan-out re-run after a crash): the per-company unique key makes it a no-op.
    expect(await deliveries.fanOut(companyId, eventId)).toBe(0);
  });
});

it('a fan-out under another company finds no event: the statement is keyed by (company, id)', async () => {
  await rolledBack(async () => {
    const companyId = await aCompanyWithEndpoint();
    const other = await aCompanyWithEndpoint();
    const eventId = await events.append(companyId, 'invoice.created', {
      createdAt: new Date().toISOString(),
    });
    expect(await deliveries.fanOut(other, eventId)).toBe(0);
  });
});

it('a fan-out job queued without the company (previous version, sweeper re-queue) still fans out', async () => {
  await rolledBack(async () => {
    const companyId = await aCompanyWithEndpoint();
    const eventId = await events.append(companyId, 'invoice.created', {
      createdAt: new Date().toISOString(),
    });
    expect(await fanOut.execute(undefined, eventId)).toBe(1);
    expect(await fanOut.execute(undefined, randomUUID())).toBe(0);
  });
});
