import { Injectable } from '@nestjs/common';
import { Transactional, TransactionHost, type PgTransactionalAdapter } from '@ledgerkey/database';
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

/** What one `leaseDue` took: the deliveries to attempt now, and how many it canceled. */
export interface DueDeliveries {
  leased: LeasedDelivery[];
  /** Due deliveries of disabled endpoints, now canceled (no attempt). */
  canceled: number;
}

/** What happens after an attempt: done, or the next attempt's delay. */
export type AttemptFollowUp = { kind: 'delivered' } | { kind: 'failed' } | { kind: 'retry'; delayMs: number };

export interface SweepResult {
  /**
   * Deliveries whose lease expired (their worker died mid-attempt): the attempt is recorded as
   * abandoned, and the delivery is due again at once, or failed if that was its last attempt.
   */
  abandoned: number;
}

/** Rows one sweep handles; the next sweep takes the rest. */
const SWEEP_BATCH = 500;

interface LeasedRow {
  id: string;
  company_id: string;
  event_id: string;
  endpoint_id: string;
  attempt_count: number;
  lease_token: string;
  leased_at: Date;
  url: string;
  secret: string;
}

function toLeased(row: LeasedRow): LeasedDelivery {
  return {
    deliveryId: row.id,
    companyId: row.company_id,
    eventId: row.event_id,
    endpointId: row.endpoint_id,
    attemptNumber: row.attempt_count,
    leaseToken: row.lease_token,
    leasedAt: row.leased_at,
    url: row.url,
    storedSecret: row.secret,
  };
}

/**
 * Webhook deliveries and their attempts: the worker's side. A pending delivery is due at its
 * `next_attempt_at`; the dispatcher takes due ones (`leaseDue`). Deliveries are owned through a
 * lease (`leased_until`, `lease_token`) taken before each attempt: the lease says who may attempt.
 */
@Injectable()
export class WebhookDeliveriesRepository {
  constructor(private readonly txHost: TransactionHost<PgTransactionalAdapter>) {}

  /**
   * Creates one delivery per enabled endpoint subscribed to the event (`fan_out_event`, as the
   * outbox does when it appends an event), for a fan-out job of the previous version.
   * @returns the number of deliveries created (0 when re-run: the unique (event, endpoint) pair)
   */
  async fanOut(companyId: string, eventId: string): Promise<number> {
    const rows = await this.txHost.tx.query<{ deliveries: number }>(
      `SELECT fan_out_event(company_id, id, type) AS deliveries FROM events WHERE company_id = $1 AND id = $2`,
      [companyId, eventId],
    );
    return rows[0]?.deliveries ?? 0;
  }

  /**
   * Leases up to `limit` due deliveries (pending, unleased, `next_attempt_at` passed), oldest due
   * first, for one attempt each, and counts the attempt; a due delivery of a disabled endpoint is
   * canceled instead. One statement: SKIP LOCKED lets any number of dispatchers claim at once,
   * each delivery going to exactly one of them.
   */
  async leaseDue(limit: number, leaseMs: number): Promise<DueDeliveries> {
    const rows = await this.txHost.tx.query<LeasedRow & { canceled: boolean }>(
      `WITH due AS (
         SELECT d.company_id, d.id, w.status AS endpoint_status
           FROM webhook_deliveries d
           JOIN webhook_endpoints w ON w.company_id = d.company_id AND w.id = d.endpoint_id
          WHERE d.status = 'pending' AND d.leased_until IS NULL AND d.next_attempt_at <= now()
          ORDER BY d.next_attempt_at
          LIMIT $1
          FOR UPDATE OF d SKIP LOCKED
       ),
       canceled AS (
         UPDATE webhook_deliveries d
            SET status = 'canceled', finished_at = now(), last_error = 'endpoint disabled'
           FROM due
          WHERE d.company_id = due.company_id AND d.id = due.id AND due.endpoint_status <> 'enabled'
          RETURNING d.id
       ),
       leased AS (
         UPDATE webhook_deliveries d
            SET attempt_count = d.attempt_count + 1, lease_token = gen_random_uuid(),
                leased_at = now(), leased_until = now() + $2 * interval '1 millisecond'
           FROM due
          WHERE d.company_id = due.company_id AND d.id = due.id AND due.endpoint_status = 'enabled'
          RETURNING d.id, d.company_id, d.event_id, d.endpoint_id, d.attempt_count, d.lease_token, d.leased_at
       )
       SELECT l.*, w.url, w.secret, false AS canceled
         FROM leased l JOIN webhook_endpoints w ON w.company_id = l.company_id AND w.id = l.endpoint_id
       UNION ALL
       SELECT id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, true FROM canceled`,
      [limit, leaseMs],
    );
    return {
      leased: rows.filter((row) => !row.canceled).map(toLeased),
      canceled: rows.filter((row) => row.canceled).length,
    };
  }

  /**
   * The company of an event, for a fan-out job whose payload does not name it (queued before
   * TenantKeys1765500000000, or re-queued by the sweeper from its key). By id alone
   * (ix_events_id): off the hot path, see docs/scaling.md.
   */
  async companyOfEvent(eventId: string): Promise<string | null> {
    const rows = await this.txHost.tx.query<{ company_id: string }>(
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
    const rows = await this.txHost.tx.query<{ company_id: string }>(
      `SELECT company_id FROM webhook_deliveries WHERE id = $1`,
      [deliveryId],
    );
    return rows[0]?.company_id ?? null;
  }

  /**
   * Takes the lease for the next attempt of one delivery if it is pending, due and unleased, and
   * counts the attempt (a delivery job of the previous version). A delivery whose endpoint was
   * disabled is canceled instead. SKIP LOCKED: a worker already taking this lease wins; this one
   * walks away.
   */
  @Transactional()
  async lease(
    companyId: string,
    deliveryId: string,
    leaseToken: string,
    leaseMs: number,
  ): Promise<LeaseResult> {
    const candidates = await this.txHost.tx.query<{ endpoint_status: string }>(
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
    const rows = await this.txHost.tx.query<{
      company_id: string;
      event_id: string;
      endpoint_id: string;
      attempt_count: number;
      leased_at: Date;
      url: string;
      secret: string;
    }>(
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
   * Records an attempt and releases the lease in one statement: the attempt row and the
   * delivery's new state (for a retry: pending, due after the delay) commit together. The
   * delivery changes only while this worker still holds the lease; the attempt is recorded
   * regardless, unless the sweeper already recorded it as abandoned (its lease ran out first).
   * @returns false when the lease had been lost
   */
  async recordAttempt(
    delivery: LeasedDelivery,
    outcome: AttemptOutcome,
    followUp: AttemptFollowUp,
  ): Promise<boolean> {
    const status = followUp.kind === 'retry' ? 'pending' : followUp.kind;
    const rows = await this.txHost.tx.query<{ id: string }>(
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
          RETURNING id
       )
       SELECT id FROM released`,
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
   * Recovers deliveries whose worker died mid-attempt (expired lease): the attempt is recorded
   * as abandoned, and the delivery is due again at once (the dispatchers take it), or marked
   * failed if that was its last attempt. SKIP LOCKED lets sweepers of several workers run at
   * once without waiting.
   */
  async sweep(maxAttempts: number): Promise<SweepResult> {
    const rows = await this.txHost.tx.query<{ id: string }>(
      `WITH stale AS (
         SELECT id, company_id, event_id, endpoint_id, attempt_count, leased_at
           FROM webhook_deliveries
          WHERE status = 'pending' AND leased_until < now()
          ORDER BY leased_until
          LIMIT ${SWEEP_BATCH}
          FOR UPDATE SKIP LOCKED
       ),
       abandoned_attempts AS (
         INSERT INTO webhook_attempts (id, company_id, delivery_id, endpoint_id, event_id, attempt_number,
                                       result, error, started_at, finished_at)
         SELECT gen_random_uuid(), company_id, id, endpoint_id, event_id, attempt_count, 'abandoned',
                'the worker stopped before recording a result (lease expired)', leased_at, now()
           FROM stale
         ON CONFLICT (company_id, delivery_id, attempt_number) DO NOTHING
       ),
       swept AS (
         UPDATE webhook_deliveries d
            SET leased_at = NULL, leased_until = NULL, lease_token = NULL, next_attempt_at = now(),
                status = CASE WHEN s.attempt_count >= $1 THEN 'failed' ELSE 'pending' END,
                finished_at = CASE WHEN s.attempt_count >= $1 THEN now() END,
                last_error = 'abandoned: lease expired'
           FROM stale s
          WHERE d.company_id = s.company_id AND d.id = s.id
          RETURNING d.id
       )
       SELECT id FROM swept`,
      [maxAttempts],
    );
    return { abandoned: rows.length };
  }
}
