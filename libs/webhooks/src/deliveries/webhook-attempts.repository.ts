import { Injectable } from '@nestjs/common';
import {
  TransactionHost,
  type TypeOrmTransactionalAdapter,
  afterCursorSql,
  orderBySql,
  pageOf,
} from '@ledgerkey/database';
import type { AttemptResult, WebhookAttemptView } from './webhook-attempt.view';

interface AttemptRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  delivery_id: string;
  attempt_number: number;
  result: AttemptResult;
  status_code: number | null;
  duration_ms: number | null;
  error: string | null;
  started_at: Date;
  finished_at: Date;
}

function toView(row: AttemptRow): WebhookAttemptView {
  return {
    id: row.id,
    object: 'webhook_attempt',
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    deliveryId: row.delivery_id,
    attemptNumber: row.attempt_number,
    result: row.result,
    statusCode: row.status_code,
    durationMs: row.duration_ms,
    error: row.error,
    startedAt: row.started_at.toISOString(),
    finishedAt: row.finished_at.toISOString(),
  };
}

/** Recorded delivery attempts, read side. Every method takes the company id first. */
/** Keyset order of the list; ends in a unique column. */
const WEBHOOK_ATTEMPTS_ORDER = ['seq'];

@Injectable()
export class WebhookAttemptsRepository {
  constructor(private readonly txHost: TransactionHost<TypeOrmTransactionalAdapter>) {}

  /** An endpoint's attempts in recording order, after the attempt `startingAfter`. */
  async listByEndpoint(
    companyId: string,
    endpointId: string,
    limit: number,
    startingAfter?: string,
  ): Promise<{ data: WebhookAttemptView[]; hasMore: boolean }> {
    const rows = await this.txHost.tx.query<AttemptRow[]>(
      `SELECT a.id, a.endpoint_id, a.event_id, a.delivery_id, a.attempt_number, a.result, a.status_code,
              a.duration_ms, a.error, a.started_at, a.finished_at
         FROM webhook_attempts a
        WHERE a.company_id = $1 AND a.endpoint_id = $2
          AND ${afterCursorSql('webhook_attempts', 'a', WEBHOOK_ATTEMPTS_ORDER, 3)}
        ${orderBySql('a', WEBHOOK_ATTEMPTS_ORDER)}
        LIMIT $4`,
      [companyId, endpointId, startingAfter ?? null, limit + 1],
    );
    return pageOf(rows, limit, toView);
  }
}
