import { Injectable } from '@nestjs/common';
import {
  Propagation,
  Transactional,
  TransactionHost,
  type TypeOrmTransactionalAdapter,
  afterCursorSql,
  orderBySql,
  pageOf,
} from '@ledgerkey/database';
import type { WebhookEndpointView } from './webhook-endpoint.view';

interface EndpointRow {
  id: string;
  url: string;
  enabled_events: string[];
  status: 'enabled' | 'disabled';
  created_at: Date;
  disabled_at: Date | null;
}

const COLUMNS = `id, url, enabled_events, status, created_at, disabled_at`;

function toView(row: EndpointRow): WebhookEndpointView {
  return {
    id: row.id,
    object: 'webhook_endpoint',
    url: row.url,
    enabledEvents: row.enabled_events,
    status: row.status,
    createdAt: row.created_at.toISOString(),
    disabledAt: row.disabled_at?.toISOString() ?? null,
  };
}

/** Webhook endpoints of one company. Every method takes the company id first. */
/** Keyset order of the list; ends in a unique column. */
const WEBHOOK_ENDPOINTS_ORDER = ['seq'];

@Injectable()
export class WebhookEndpointsRepository {
  constructor(private readonly txHost: TransactionHost<TypeOrmTransactionalAdapter>) {}

  /** Stores a new endpoint with its sealed signing secret, in the create's (idempotent) transaction. */
  @Transactional(Propagation.Mandatory)
  async insert(
    companyId: string,
    endpoint: { id: string; url: string; enabledEvents: string[]; sealedSecret: string; createdAt: Date },
  ): Promise<WebhookEndpointView> {
    const rows = await this.txHost.tx.query<EndpointRow[]>(
      `INSERT INTO webhook_endpoints (id, company_id, url, enabled_events, secret, created_at)
       VALUES ($1, $2, $3, $4, $5, $6)
       RETURNING ${COLUMNS}`,
      [
        endpoint.id,
        companyId,
        endpoint.url,
        endpoint.enabledEvents,
        endpoint.sealedSecret,
        endpoint.createdAt,
      ],
    );
    return toView(rows[0]);
  }

  /**
   * Up to `limit` endpoints (any company) whose secret does not start with `sealedPrefix`, after
   * `afterSeq` in creation order, locked for this transaction. Not company-first by design: a
   * maintenance pass over the whole table, run at boot, never on a request.
   */
  @Transactional(Propagation.Mandatory)
  async lockSecretsNotStartingWith(
    sealedPrefix: string,
    afterSeq: string,
    limit: number,
  ): Promise<Array<{ companyId: string; id: string; seq: string; secret: string }>> {
    const rows = await this.txHost.tx.query<
      Array<{ company_id: string; id: string; seq: string; secret: string }>
    >(
      // starts_with, not LIKE: a key id may contain "_", a LIKE wildcard.
      // SKIP LOCKED: processes booting together split the rows instead of queueing on them;
      // NO KEY UPDATE does not block inserts of deliveries referencing these endpoints.
      `SELECT company_id, id, seq, secret FROM webhook_endpoints
        WHERE NOT starts_with(secret, $1) AND seq > $2
        ORDER BY seq
        LIMIT $3
        FOR NO KEY UPDATE SKIP LOCKED`,
      [sealedPrefix, afterSeq, limit],
    );
    return rows.map((row) => ({ companyId: row.company_id, id: row.id, seq: row.seq, secret: row.secret }));
  }

  /** Replaces stored secrets (rows locked by lockSecretsNotStartingWith in this transaction). */
  @Transactional(Propagation.Mandatory)
  async replaceSecrets(rows: Array<{ companyId: string; id: string; storedSecret: string }>): Promise<void> {
    if (rows.length === 0) return;
    await this.txHost.tx.query(
      `UPDATE webhook_endpoints w SET secret = v.secret
         FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS v (company_id, id, secret)
        WHERE w.company_id = v.company_id AND w.id = v.id`,
      [rows.map((row) => row.companyId), rows.map((row) => row.id), rows.map((row) => row.storedSecret)],
    );
  }

  async findById(companyId: string, endpointId: string): Promise<WebhookEndpointView | null> {
    const rows = await this.txHost.tx.query<EndpointRow[]>(
      `SELECT ${COLUMNS} FROM webhook_endpoints WHERE company_id = $1 AND id = $2`,
      [companyId, endpointId],
    );
    return rows[0] ? toView(rows[0]) : null;
  }

  /** A page in creation order, after the endpoint `startingAfter` of this company. */
  async list(
    companyId: string,
    limit: number,
    startingAfter?: string,
  ): Promise<{ data: WebhookEndpointView[]; hasMore: boolean }> {
    const rows = await this.txHost.tx.query<EndpointRow[]>(
      `SELECT ${COLUMNS} FROM webhook_endpoints w
        WHERE w.company_id = $1
          AND ${afterCursorSql('webhook_endpoints', 'w', WEBHOOK_ENDPOINTS_ORDER, 2)}
        ${orderBySql('w', WEBHOOK_ENDPOINTS_ORDER)}
        LIMIT $3`,
      [companyId, startingAfter ?? null, limit + 1],
    );
    return pageOf(rows, limit, toView);
  }

  /**
   * Disables an endpoint (idempotent: the first disabled_at stays). Deliveries still pending
   * are canceled by the worker when their turn comes, not here, so this never waits on a
   * delivery row a worker holds.
   * @returns the endpoint, or null when this company has no such endpoint
   */
  async disable(companyId: string, endpointId: string): Promise<WebhookEndpointView | null> {
    const rows = await this.txHost.tx.query<EndpointRow[]>(
      // Wrapped in a CTE so the driver returns the rows (a bare UPDATE returns [rows, count]).
      `WITH disabled AS (
         UPDATE webhook_endpoints
            SET status = 'disabled', disabled_at = coalesce(disabled_at, now())
          WHERE company_id = $1 AND id = $2
          RETURNING ${COLUMNS}
       )
       SELECT * FROM disabled`,
      [companyId, endpointId],
    );
    return rows[0] ? toView(rows[0]) : null;
  }
}
