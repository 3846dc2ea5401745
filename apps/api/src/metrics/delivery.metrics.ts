import { Injectable, Logger } from '@nestjs/common';
import { DatabasePool } from '@ledgerkey/database';
import {
  countDeliveryAttempts,
  DELIVERY_ATTEMPT_RESULTS,
  readDeliveryBacklog,
  type DeliveryBacklog,
} from '@ledgerkey/webhooks';
import { Counter, Gauge, Registry } from 'prom-client';

/**
 * Event delivery figures, read from the database at scrape time. They are the same for every
 * API process on the database: aggregate them across instances with max, not sum. A failed
 * read is logged and leaves that metric without a sample; the other metrics are still served.
 */
@Injectable()
export class DeliveryMetrics {
  private readonly logger = new Logger('Metrics');
  private pendingBacklog: Promise<DeliveryBacklog> | undefined;

  constructor(registry: Registry, pool: DatabasePool) {
    const undelivered: Gauge = new Gauge({
      name: 'ledgerkey_outbox_undelivered_events',
      help: 'Events not yet delivered: a webhook delivery still pending.',
      registers: [registry],
      collect: () => this.refresh(undelivered, this.backlogOf(pool), (b) => undelivered.set(b.events)),
    });
    const oldestAge: Gauge = new Gauge({
      name: 'ledgerkey_outbox_oldest_undelivered_event_age_seconds',
      help: 'Age of the oldest undelivered event, in seconds (0 when every event is delivered).',
      registers: [registry],
      collect: () => this.refresh(oldestAge, this.backlogOf(pool), (b) => oldestAge.set(b.oldestAgeSeconds)),
    });
    const attempts: Counter<'result'> = new Counter({
      name: 'ledgerkey_webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts recorded in the database, by result.',
      labelNames: ['result'],
      registers: [registry],
      collect: () =>
        this.refresh(attempts, countDeliveryAttempts(pool), (counts) => {
          attempts.reset();
          for (const result of DELIVERY_ATTEMPT_RESULTS) attempts.inc({ result }, counts[result]);
        }),
    });
  }

  /** Both backlog gauges come from one query per scrape (prom-client collects them concurrently). */
  private backlogOf(pool: DatabasePool): Promise<DeliveryBacklog> {
    this.pendingBacklog ??= readDeliveryBacklog(pool).finally(() => {
      this.pendingBacklog = undefined;
    });
    return this.pendingBacklog;
  }

  private async refresh<T>(
    metric: Gauge | Counter<'result'>,
    reading: Promise<T>,
    apply: (value: T) => void,
  ): Promise<void> {
    try {
      apply(await reading);
    } catch (error) {
      metric.reset();
      this.logger.warn({ err: error }, 'could not read a delivery metric from the database');
    }
  }
}
