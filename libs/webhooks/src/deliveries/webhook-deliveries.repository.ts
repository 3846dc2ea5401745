import { Injectable } from '@nestjs/common';
import { Transactional, TransactionHost, type TypeOrmTransactionalAdapter } from '@ledgerkey/database';
import {
  enqueueJobSql,
  idOfJobKeySql,
  isJobOfTaskSql,
  JobTasks,
  jobKeySql,
  QUEUED_JOBS,
} from '@ledgerkey/jobs';
import type { AttemptOutcome } from '../deliver-webhook/webhook-request';

/** A delivery this worker owns for one attempt. */
export interface LeasedDelivery {
  deliveryId: string;
  companyId: string;
  eventId: string;
  endpointId: string;
  attemptNumber: number;
  leaseToken: string;
  leasedAt: Date;
  url: string;
  /** The endpoint's signing secret as stored (sealed, or legacy plaintext): see openStoredSecret. */
  storedSecret: string;
}

export type LeaseResult =
  | { kind: 'leased'; delivery: LeasedDelivery }
  /** The endpoint was disabled: the delivery is now canceled, no attempt is made. */
  | { kind: 'canceled' }
  /** Finished, not yet due, or another worker holds it: nothing to do. */
  | { kind: 'none' };

/** What happens after an attempt: done, or the next attempt's delay. */
export type AttemptFollowUp = { kind: 'delivered' } | { kind: 'failed' } | { kind: 'retry'; delayMs: number };

export interface SweepResult {
  /** Deliveries whose lease expired (worker died mid-attempt), now queued again or failed. */
  abandoned: number;
  /**
   * Pending deliveries without a lease whose job was lost (long overdue) or is held by a worker
   * that could not release it (locked longer than a lease), queued again.
   */
  requeued: number;
  /** Fan-out jobs locked far longer than a fan-out takes (worker died), queued again. */
  fanOutsRequeued: number;
}

/**
 * A fan-out job is one short statement: one still locked after this long belongs to a dead
 * worker (graphile-worker itself would only release it after 4 hours).
 */
const FAN_OUT_STALE_AFTER = '1 minute';
/** A pending delivery this far past due with no lease has lost its job (e.g. a permanently failed one). */
const OVERDUE_AFTER = '5 minutes';
/** Rows one sweep handles; the next sweep takes the rest. */
const SWEEP_BATCH = 500;

const { DeliverWebhook, FanOutEvent } = JobTasks;
/**
 * Queues the delivery `id` of company `company_id` at once. `replace`: when its job is still
 * locked by a dead worker, a new job is made (the lease, not the job, decides who attempts).
 */
const ENQUEUE_DELIVERY = enqueueJobSql(
  DeliverWebhook,
  { companyId: 'company_id', deliveryId: 'id' },
  { jobKeyMode: 'replace' },
);

/**
 * Webhook deliveries and their attempts: the worker's side. Deliveries are owned through a
 * lease (`leased_until`, `lease_token`) taken before each attempt; the job queue only says
 * "look at delivery X now", the lease says who may attempt it.
 */
@Injectable()
export class WebhookDeliveriesRepository {
  constructor(private readonly txHost: TransactionHost<TypeOrmTransactionalAdapter>) {}

  /**
   * Creates one delivery per enabled endpoint subscribed to the event, and queues the first
   * attempt of each, in one statement.
   * @returns the number of deliveries created (0 when re-run: the unique (event, endpoint) pair)
   */
  async fanOut(companyId: string, eventId: string): Promise<number> {
    const rows = await this.txHost.tx.query<Array<{ job_id: string }>>(
      `WITH created AS (
         INSERT INTO webhook_deliveries (id, company_id, event_id, endpoint_id)
         SELECT gen_random_uuid(), e.company_id, e.id, w.id
           FROM events e
           JOIN webhook_endpoints w ON w.company_id = e.company_id
          WHERE e.company_id = $1 AND e.id = $2
            AND w.status = 'enabled'
            AND (w.enabled_events @> ARRAY[e.type] OR w.enabled_events @> ARRAY['*'])
         -- A re-run fan-out (crash after commit) creates nothing and queues nothing twice.
         ON CONFLICT (company_id, event_id, endpoint_id) DO NOTHING
         RETURNING id
       )
       SELECT (${enqueueJobSql(DeliverWebhook, { companyId: '$1::uuid', deliveryId: 'id' }, { jobKeyMode: 'replace' })}).id AS job_id
         FROM created`,
      [companyId, eventId],
    );
    return rows.length;
  }

  /**
   * The company of an event, for a fan-out job whose payload does not name it (queued before
   * TenantKeys1765500000000, or re-queued by the sweeper from its key). By id alone
   * (ix_events_id): off the hot path, see docs/scaling.md.
   */
  async companyOfEvent(eventId: string): Promise<string | null> {
    const rows = await this.txHost.tx.query<Array<{ company_id: string }>>(
      `SELECT company_id FROM events WHERE id = $1`,
      [eventId],
    );
    return rows[0]?.company_id ?? null;
  }

  /**
   * The company of a delivery, for a delivery job queued before TenantKeys1765500000000 (its
   * payload names only the delivery). By id alone (ix_webhook_deliveries_id): off the hot path.
   */
  async companyOfDelivery(deliveryId: string): Promise<string | null> {
    const rows = await this.txHost.tx.query<Array<{ company_id: string }>>(
      `SELECT company_id FROM webhook_deliveries WHERE id = $1`,
      [deliveryId],
    );
    return rows[0]?.company_id ?? null;
  }

  /**
   * Takes the lease for the next attempt if the delivery is pending, due and unleased, and
   * counts the attempt. A delivery whose endpoint was disabled is canceled instead.
   * SKIP LOCKED: a worker already taking this lease wins; this one walks away.
   */
  @Transactional()
  async lease(
    companyId: string,
    deliveryId: string,
    leaseToken: string,
    leaseMs: number,
  ): Promise<LeaseResult> {
    const candidates = await this.txHost.tx.query<Array<{ endpoint_status: string }>>(
      `SELECT w.status AS endpoint_status
         FROM webhook_deliveries d
         JOIN webhook_endpoints w ON w.company_id = d.company_id AND w.id = d.endpoint_id
        WHERE d.company_id = $1 AND d.id = $2
          AND d.status = 'pending' AND d.leased_until IS NULL AND d.next_attempt_at <= now()
        FOR UPDATE OF d SKIP LOCKED`,
      [companyId, deliveryId],
    );
    if (candidates.length === 0) return { kind: 'none' };
    if (candidates[0].endpoint_status !== 'enabled') {
      await this.txHost.tx.query(
        `WITH canceled AS (
           UPDATE webhook_deliveries
              SET status = 'canceled', finished_at = now(), last_error = 'endpoint disabled'
            WHERE company_id = $1 AND id = $2
            RETURNING id
         )
         SELECT id FROM canceled`,
        [companyId, deliveryId],
      );
      return { kind: 'canceled' };
    }
    const rows = await this.txHost.tx.query<
      Array<{
        company_id: string;
        event_id: string;
        endpoint_id: string;
        attempt_count: number;
        leased_at: Date;
        url: string;
        secret: string;
      }>
    >(
      // The row is locked above, so the lease and the attempt number are this worker's alone.
      `WITH leased AS (
         UPDATE webhook_deliveries
            SET attempt_count = attempt_count + 1, lease_token = $3,
                leased_at = now(), leased_until = now() + $4 * interval '1 millisecond'
          WHERE company_id = $1 AND id = $2
          RETURNING company_id, event_id, endpoint_id, attempt_count, leased_at
       )
       SELECT l.*, w.url, w.secret
         FROM leased l JOIN webhook_endpoints w ON w.company_id = l.company_id AND w.id = l.endpoint_id`,
      [companyId, deliveryId, leaseToken, leaseMs],
    );
    const row = rows[0];
    return {
      kind: 'leased',
      delivery: {
        deliveryId,
        companyId: row.company_id,
        eventId: row.event_id,
        endpointId: row.endpoint_id,
        attemptNumber: row.attempt_count,
        leaseToken,
        leasedAt: row.leased_at,
        url: row.url,
        storedSecret: row.secret,
      },
    };
  }

  /**
   * Records an attempt and releases the lease in one statement: the attempt row, the
   * delivery's new state and (for a retry) the next job commit together. The delivery changes
   * only while this worker still holds the lease; the attempt is recorded regardless, unless
   * the sweeper already recorded it as abandoned (its lease ran out first).
   * @returns false when the lease had been lost
   */
  async recordAttempt(
    delivery: LeasedDelivery,
    outcome: AttemptOutcome,
    followUp: AttemptFollowUp,
  ): Promise<boolean> {
    const status = followUp.kind === 'retry' ? 'pending' : followUp.kind;
    const rows = await this.txHost.tx.query<Array<{ id: string }>>(
      `WITH attempt AS (
         INSERT INTO webhook_attempts (id, company_id, delivery_id, endpoint_id, event_id, attempt_number,
                                       result, status_code, duration_ms, error, started_at, finished_at)
         VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now())
         -- The sweeper may have recorded this attempt as abandoned already: keep its row.
         ON CONFLICT (company_id, delivery_id, attempt_number) DO NOTHING
       ),
       released AS (
         UPDATE webhook_deliveries
            SET status = $11, leased_at = NULL, leased_until = NULL, lease_token = NULL,
                next_attempt_at = now() + $12 * interval '1 millisecond',
                finished_at = CASE WHEN $11 = 'pending' THEN NULL ELSE now() END,
                last_error = $9
          WHERE company_id = $1 AND id = $2 AND lease_token = $13
          RETURNING id, status, next_attempt_at
       )
       SELECT id, CASE WHEN status = 'pending' THEN
                    (${enqueueJobSql(DeliverWebhook, { companyId: '$1::uuid', deliveryId: 'id' }, { runAt: 'next_attempt_at', jobKeyMode: 'replace' })}).id
                  END AS job_id
         FROM released`,
      [
        delivery.companyId,
        delivery.deliveryId,
        delivery.endpointId,
        delivery.eventId,
        delivery.attemptNumber,
        outcome.succeeded ? 'succeeded' : 'failed',
        outcome.statusCode,
        outcome.durationMs,
        outcome.error,
        delivery.leasedAt,
        status,
        followUp.kind === 'retry' ? followUp.delayMs : 0,
        delivery.leaseToken,
      ],
    );
    return rows.length === 1;
  }

  /**
   * Recovers work a dead worker left behind (graphile-worker keeps a crashed worker's job
   * locked for 4 hours):
   * - a delivery with an expired lease: its attempt is recorded as abandoned, and the delivery
   *   is queued again at once, or marked failed if that was its last attempt;
   * - a pending delivery long overdue without a lease: queued again;
   * - a pending delivery without a lease whose job has been locked longer than a lease lasts:
   *   queued again (its worker lost the database before it could release the job, e.g. during a
   *   restart, and graphile-worker would keep the job locked for 4 hours);
   * - a fan-out job locked far longer than a fan-out takes: queued again (fan-out is idempotent).
   * `job_key_mode := 'replace'` on a locked job makes a new job: the lease, not the job, decides
   * who attempts. SKIP LOCKED lets sweepers of several workers run at once without waiting.
   */
  @Transactional()
  async sweep(maxAttempts: number, leaseMs: number): Promise<SweepResult> {
    const deliveries = await this.txHost.tx.query<Array<{ abandoned: boolean }>>(
      `WITH stale AS (
         SELECT id, company_id, event_id, endpoint_id, attempt_count, leased_at,
                leased_until IS NOT NULL AS abandoned
           FROM webhook_deliveries
          WHERE status = 'pending'
            AND (leased_until < now()
                 OR (leased_until IS NULL AND next_attempt_at < now() - interval '${OVERDUE_AFTER}'))
          ORDER BY next_attempt_at
          LIMIT ${SWEEP_BATCH}
          FOR UPDATE SKIP LOCKED
       ),
       abandoned_attempts AS (
         INSERT INTO webhook_attempts (id, company_id, delivery_id, endpoint_id, event_id, attempt_number,
                                       result, error, started_at, finished_at)
         SELECT gen_random_uuid(), company_id, id, endpoint_id, event_id, attempt_count, 'abandoned',
                'the worker stopped before recording a result (lease expired)', leased_at, now()
           FROM stale WHERE abandoned
         ON CONFLICT (company_id, delivery_id, attempt_number) DO NOTHING
       ),
       swept AS (
         UPDATE webhook_deliveries d
            SET leased_at = NULL, leased_until = NULL, lease_token = NULL, next_attempt_at = now(),
                status = CASE WHEN s.abandoned AND s.attempt_count >= $1 THEN 'failed' ELSE 'pending' END,
                finished_at = CASE WHEN s.abandoned AND s.attempt_count >= $1 THEN now() END,
                last_error = CASE WHEN s.abandoned THEN 'abandoned: lease expired' ELSE d.last_error END
           FROM stale s
          WHERE d.company_id = s.company_id AND d.id = s.id
          RETURNING d.id, d.company_id, d.status, s.abandoned
       )
       SELECT id, abandoned,
              CASE WHEN status = 'pending' THEN (${ENQUEUE_DELIVERY}).id END AS job_id
         FROM swept`,
      [maxAttempts],
    );
    const fanOuts = await this.txHost.tx.query<Array<{ job_id: string }>>(
      // The payload is rebuilt from the job key (the event id; the fan-out looks up its company):
      // the public jobs view has no payload column. The rebuilt key is the job's own, so
      // `replace` takes its place.
      `SELECT (${enqueueJobSql(FanOutEvent, { eventId: idOfJobKeySql(FanOutEvent, 'j') }, { jobKeyMode: 'replace' })}).id AS job_id
         FROM ${QUEUED_JOBS} j
        WHERE ${isJobOfTaskSql(FanOutEvent, 'j')}
          AND j.locked_at < now() - interval '${FAN_OUT_STALE_AFTER}'
        LIMIT ${SWEEP_BATCH}`,
    );
    const heldJobs = await this.txHost.tx.query<Array<{ job_id: string }>>(
      // A job that took the lease would have let it expire by now (the first statement handles
      // that); an unleased delivery under a job locked this long was never leased, or was
      // released, by a worker that then failed to release the job itself. The replacement runs
      // when the delivery is due; the old job loses its key, so it is queued again only once.
      `SELECT (${enqueueJobSql(DeliverWebhook, { companyId: 'd.company_id', deliveryId: 'd.id' }, { runAt: 'd.next_attempt_at', jobKeyMode: 'replace' })}).id AS job_id
         FROM ${QUEUED_JOBS} j
         JOIN webhook_deliveries d ON j.key = ${jobKeySql(DeliverWebhook, 'd.id')}
        WHERE ${isJobOfTaskSql(DeliverWebhook, 'j')}
          AND j.locked_at < now() - $1 * interval '1 millisecond'
          AND d.status = 'pending' AND d.leased_until IS NULL
        LIMIT ${SWEEP_BATCH}`,
      [leaseMs],
    );
    const abandoned = deliveries.filter((row) => row.abandoned).length;
    return {
      abandoned,
      requeued: deliveries.length - abandoned + heldJobs.length,
      fanOutsRequeued: fanOuts.length,
    };
  }
}
