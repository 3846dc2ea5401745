import { Injectable } from '@nestjs/common';
import {
  Propagation,
  Transactional,
  TransactionHost,
  type PgTransactionalAdapter,
  type KeysetSource,
  keysetPage,
  type Metadata,
  metadataOf,
  type Page,
  type PageRequest,
} from '@ledgerkey/database';
import type { WebhookEndpointView } from './webhook-endpoint.view';

interface EndpointRow {
  id: string;
  url: string;
  enabled_events: string[];
  status: 'enabled' | 'disabled';
  created_at: Date;
  disabled_at: Date | null;
  metadata: Metadata;
}

const COLUMNS = `id, url, enabled_events, status, created_at, disabled_at, metadata`;

function toView(row: EndpointRow): WebhookEndpointView {
  return {
    id: row.id,
    object: 'webhook_endpoint',
    url: row.url,
    enabledEvents: row.enabled_events,
    status: row.status,
    createdAt: row.created_at.toISOString(),
    disabledAt: row.disabled_at?.toISOString() ?? null,
    metadata: metadataOf(row.metadata),
  };
}

/** Keyset order of the list: creation order, unique. */
const WEBHOOK_ENDPOINTS: KeysetSource = {
  table: 'webhook_endpoints',
  alias: 'w',
  select: `SELECT ${COLUMNS} FROM webhook_endpoints w`,
  orderKeys: ['seq'],
};

/** Webhook endpoints of one company. Every method takes the company id first. */
@Injectable()
export class WebhookEndpointsRepository {
  constructor(private readonly txHost: TransactionHost<PgTransactionalAdapter>) {}

  /** Stores a new endpoint with its sealed signing secret, in the create's (idempotent) transaction. */
  @Transactional(Propagation.Mandatory)
  async insert(
    companyId: string,
    endpoint: {
      id: string;
      url: string;
      enabledEvents: string[];
      sealedSecret: string;
      createdAt: Date;
      metadata: Metadata;
    },
  ): Promise<WebhookEndpointView> {
    const rows = await this.txHost.tx.query<EndpointRow>(
      `INSERT INTO webhook_endpoints (id, company_id, url, enabled_events, secret, created_at, metadata)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       RETURNING ${COLUMNS}`,
      [
        endpoint.id,
        companyId,
        endpoint.url,
        endpoint.enabledEvents,
        endpoint.sealedSecret,
        endpoint.createdAt,
        JSON.stringify(endpoint.metadata),
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
    const rows = await this.txHost.tx.query<{ company_id: string; id: string; seq: string; secret: string }>(
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
    const rows = await this.txHost.tx.query<EndpointRow>(
      `SELECT ${COLUMNS} FROM webhook_endpoints WHERE company_id = $1 AND id = $2`,
      [companyId, endpointId],
    );
    return rows[0] ? toView(rows[0]) : null;
  }

  /** A page in creation order (or its reverse). */
  list(companyId: string, page: PageRequest): Promise<Page<WebhookEndpointView>> {
    return keysetPage(this.txHost.tx, WEBHOOK_ENDPOINTS, companyId, page, [], toView);
  }

  /**
   * Disables an endpoint (idempotent: the first disabled_at stays). Deliveries still pending
   * are canceled by the worker when their turn comes, not here, so this never waits on a
   * delivery row a worker holds.
   * @returns the endpoint, or null when this company has no such endpoint
   */
  async disable(companyId: string, endpointId: string): Promise<WebhookEndpointView | null> {
    const rows = await this.txHost.tx.query<EndpointRow>(
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
