import { Inject, Injectable, Logger } from '@nestjs/common';
import type { WorkerService } from '@ledgerkey/jobs';
import { Client } from 'pg';
import { WebhookDeliveriesRepository } from '../deliveries/webhook-deliveries.repository';
import { DeliverWebhookHandler } from '../deliver-webhook/deliver-webhook.handler';
import { WEBHOOK_OPTIONS, type WebhookOptions } from '../webhook-options';

/**
 * The channel `fan_out_event` notifies (OutboxDeliveries1765600000000) when it created a delivery:
 * delivered at the event's commit.
 */
export const DELIVERIES_CHANNEL = 'webhook_deliveries';
/** How often a dispatcher looks for due deliveries without a notification: retries, lost notifications. */
export const DISPATCH_POLL_INTERVAL_MS = 1000;
/** Wait before listening again after the listening connection was lost (the poll goes on meanwhile). */
const RELISTEN_AFTER_MS = 1000;

/**
 * Delivers webhooks from their table (a worker service, one per worker process): takes due
 * deliveries (pending, unleased, `next_attempt_at` passed) with a lease, as many as it has free
 * slots (WORKER_CONCURRENCY), and attempts each. It looks when an event created deliveries
 * (LISTEN), when an attempt ends (a slot is free), and every second (retries fall due; a
 * notification lost while the listening connection was down). Several dispatchers (processes)
 * share the table: SKIP LOCKED gives each due delivery to one of them, the lease keeps it theirs.
 */
@Injectable()
export class WebhookDispatcher implements WorkerService {
  readonly name = 'webhook_dispatcher';
  private readonly logger = new Logger('WebhookDispatcher');
  private concurrency = 0;
  private connectionString = '';
  private running = false;
  private readonly inFlight = new Set<Promise<void>>();
  /** The claim in progress; a wake-up meanwhile asks for another claim after it. */
  private claiming: Promise<void> | undefined;
  private wokenWhileClaiming = false;
  private poll: NodeJS.Timeout | undefined;
  private listener: Client | undefined;
  private relisten: NodeJS.Timeout | undefined;
  /** Once a claim failed, the next failure is logged only after a success (no log flood during an outage). */
  private claimFailing = false;

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly deliver: DeliverWebhookHandler,
    @Inject(WEBHOOK_OPTIONS) private readonly options: WebhookOptions,
  ) {}

  async start({
    connectionString,
    concurrency,
  }: {
    connectionString: string;
    concurrency: number;
  }): Promise<void> {
    if (this.running) throw new Error('the webhook dispatcher is already running');
    this.running = true;
    this.connectionString = connectionString;
    this.concurrency = concurrency;
    await this.listen();
    this.poll = setInterval(() => this.wake(), DISPATCH_POLL_INTERVAL_MS);
    this.poll.unref();
    this.wake();
  }

  /** Stops taking deliveries; resolves when the attempts in progress have been recorded. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearInterval(this.poll);
    clearTimeout(this.relisten);
    const listener = this.listener;
    this.listener = undefined;
    const closed = listener?.end().catch(() => undefined);
    // A claim in progress may still lease deliveries: they are attempted, and awaited here.
    await this.claiming;
    await Promise.all([closed, ...this.inFlight]);
  }

  /** Looks for due deliveries now (or right after the claim in progress). */
  wake(): void {
    if (!this.running) return;
    if (this.claiming) {
      this.wokenWhileClaiming = true;
      return;
    }
    this.claiming = this.claim().finally(() => {
      this.claiming = undefined;
      if (this.wokenWhileClaiming) {
        this.wokenWhileClaiming = false;
        this.wake();
      }
    });
  }

  /** Fills the free slots with due deliveries, batch after batch while batches come back full. */
  private async claim(): Promise<void> {
    while (this.running) {
      const free = this.concurrency - this.inFlight.size;
      if (free <= 0) return;
      let due;
      try {
        due = await this.deliveries.leaseDue(free, this.options.leaseMs);
        this.claimFailing = false;
      } catch (error) {
        if (!this.claimFailing) {
          this.logger.warn(
            `could not take due deliveries: ${error instanceof Error ? error.message : error}`,
          );
        }
        this.claimFailing = true;
        return;
      }
      for (const delivery of due.leased) {
        const attempt: Promise<void> = this.deliver
          .attemptLeased(delivery)
          .then(() => undefined)
          .catch((error: unknown) =>
            // Its lease runs out; the sweeper records the attempt as abandoned and it is due again.
            this.logger.error(
              `delivery ${delivery.deliveryId} (company ${delivery.companyId}) failed unrecorded`,
              error instanceof Error ? error.stack : error,
            ),
          )
          .finally(() => {
            this.inFlight.delete(attempt);
            this.wake();
          });
        this.inFlight.add(attempt);
      }
      if (due.leased.length + due.canceled < free) return;
    }
  }

  /** LISTENs on its own connection; when that fails or drops, tries again later (the poll goes on). */
  private async listen(): Promise<void> {
    const client = new Client({
      connectionString: this.connectionString,
      application_name: 'ledgerkey-webhooks',
    });
    let lost = false;
    const onLost = (reason: string): void => {
      if (lost) return;
      lost = true;
      if (this.listener === client) this.listener = undefined;
      client.end().catch(() => undefined);
      if (!this.running) return;
      this.logger.warn(`webhook notifications lost (${reason}); polling, listening again shortly`);
      this.relisten = setTimeout(() => void this.listen(), RELISTEN_AFTER_MS);
      this.relisten.unref();
    };
    client.on('error', (error) => onLost(error.message));
    client.on('end', () => onLost('connection ended'));
    client.on('notification', () => this.wake());
    try {
      await client.connect();
      await client.query(`LISTEN ${DELIVERIES_CHANNEL}`);
    } catch (error) {
      onLost(error instanceof Error ? error.message : String(error));
      return;
    }
    if (!this.running) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
    // Deliveries created while nobody listened are found now, not at the next poll.
    this.wake();
  }
}
