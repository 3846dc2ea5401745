import { Injectable } from '@nestjs/common';
import {
  Propagation,
  Transactional,
  TransactionHost,
  type PgTransactionalAdapter,
} from '@ledgerkey/database';
import type { ProviderEvent } from '../provider-objects';

/** How a recorded event stands: applied (its effect committed with it), parked, or ignored. */
export type ProviderEventStatus = 'applied' | 'parked' | 'ignored';

export interface ParkedProviderEvent {
  companyId: string;
  provider: string;
  event: ProviderEvent;
  attempts: number;
}

/** Provider events, per company and provider, by the provider's event id. */
@Injectable()
export class ProviderEventsRepository {
  constructor(private readonly txHost: TransactionHost<PgTransactionalAdapter>) {}

  async companyExists(companyId: string): Promise<boolean> {
    const rows = await this.txHost.tx.query<unknown>(`SELECT 1 FROM companies WHERE id = $1`, [companyId]);
    return rows.length === 1;
  }

  async statusOf(companyId: string, provider: string, eventId: string): Promise<ProviderEventStatus | null> {
    const rows = await this.txHost.tx.query<{ status: ProviderEventStatus }>(
      `SELECT status FROM provider_events WHERE company_id = $1 AND provider = $2 AND event_id = $3`,
      [companyId, provider, eventId],
    );
    return rows[0]?.status ?? null;
  }

  /**
   * Records the event as applied or ignored — the first statement of the transaction that applies
   * it, so the effect commits with the record or not at all. A parked record of the event becomes
   * this one.
   * @returns false when the event is recorded (applied or ignored) already: apply nothing
   */
  @Transactional(Propagation.Mandatory)
  async record(
    companyId: string,
    provider: string,
    event: ProviderEvent,
    status: 'applied' | 'ignored',
    reason: string | null,
  ): Promise<boolean> {
    const rows = await this.txHost.tx.query<unknown>(
      `INSERT INTO provider_events (company_id, provider, event_id, type, status, reason, payload, received_at,
                                    applied_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now(), CASE WHEN $5 = 'applied' THEN now() END)
       -- The unique key serializes twins: a concurrent delivery of the same event waits here until
       -- this transaction ends, then finds the row (not parked) and updates nothing.
       ON CONFLICT (company_id, provider, event_id) DO UPDATE
          SET status = EXCLUDED.status, reason = EXCLUDED.reason, applied_at = EXCLUDED.applied_at,
              next_attempt_at = NULL
        WHERE provider_events.status = 'parked'
       RETURNING 1`,
      [companyId, provider, event.id, event.type, status, reason, JSON.stringify(event)],
    );
    return rows.length === 1;
  }

  /**
   * Parks the event (or keeps it parked, one attempt more) until `retryAt`.
   * @returns false when it is applied or ignored already (a twin finished it)
   */
  @Transactional(Propagation.Mandatory)
  async park(
    companyId: string,
    provider: string,
    event: ProviderEvent,
    reason: string,
    retryAt: Date,
  ): Promise<boolean> {
    const rows = await this.txHost.tx.query<unknown>(
      `INSERT INTO provider_events (company_id, provider, event_id, type, status, reason, payload, received_at,
                                    attempts, next_attempt_at)
       VALUES ($1, $2, $3, $4, 'parked', $5, $6, now(), 1, $7)
       ON CONFLICT (company_id, provider, event_id) DO UPDATE
          SET reason = EXCLUDED.reason, attempts = provider_events.attempts + 1,
              next_attempt_at = EXCLUDED.next_attempt_at
        WHERE provider_events.status = 'parked'
       RETURNING 1`,
      [companyId, provider, event.id, event.type, reason.slice(0, 500), JSON.stringify(event), retryAt],
    );
    return rows.length === 1;
  }

  async attemptsOf(companyId: string, provider: string, eventId: string): Promise<number> {
    const rows = await this.txHost.tx.query<{ attempts: number }>(
      `SELECT attempts FROM provider_events WHERE company_id = $1 AND provider = $2 AND event_id = $3`,
      [companyId, provider, eventId],
    );
    return rows[0]?.attempts ?? 0;
  }

  /** Parked events due for another try, across companies (the worker's), oldest due first. */
  async dueParked(limit: number): Promise<ParkedProviderEvent[]> {
    // ix_provider_events_parked: only parked rows.
    const rows = await this.txHost.tx.query<{
      company_id: string;
      provider: string;
      payload: ProviderEvent;
      attempts: number;
    }>(
      `SELECT company_id, provider, payload, attempts FROM provider_events
        WHERE status = 'parked' AND next_attempt_at <= now()
        ORDER BY next_attempt_at LIMIT $1`,
      [limit],
    );
    return rows.map((row) => ({
      companyId: row.company_id,
      provider: row.provider,
      event: row.payload,
      attempts: row.attempts,
    }));
  }
}
