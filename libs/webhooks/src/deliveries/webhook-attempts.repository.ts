import { Injectable } from '@nestjs/common';
import {
  TransactionHost,
  type PgTransactionalAdapter,
  type KeysetSource,
  keysetPage,
  type Page,
  type PageRequest,
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

/** Keyset order of the list: recording order, unique. */
const WEBHOOK_ATTEMPTS: KeysetSource = {
  table: 'webhook_attempts',
  alias: 'a',
  select: `SELECT a.id, a.endpoint_id, a.event_id, a.delivery_id, a.attempt_number, a.result, a.status_code,
                  a.duration_ms, a.error, a.started_at, a.finished_at
             FROM webhook_attempts a`,
  orderKeys: ['seq'],
};

/** Recorded delivery attempts, read side. Every method takes the company id first. */
@Injectable()
export class WebhookAttemptsRepository {
  constructor(private readonly txHost: TransactionHost<PgTransactionalAdapter>) {}

  /** An endpoint's attempts in recording order (or its reverse). */
  listByEndpoint(
    companyId: string,
    endpointId: string,
    page: PageRequest,
  ): Promise<Page<WebhookAttemptView>> {
    return keysetPage(
      this.txHost.tx,
      WEBHOOK_ATTEMPTS,
      companyId,
      page,
      [(bind) => `a.endpoint_id = ${bind(endpointId)}::uuid`],
      toView,
    );
  }
}
