import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  keysetPage,
  type KeysetSource,
  type Page,
  type PageRequest,
  Propagation,
  Transactional,
  TransactionHost,
  type PgTransactionalAdapter,
} from '@ledgerkey/database';
import type { ApiKeyScope } from '../api-key';
import type { Company } from '../company';
import type { ApiKeyView } from './api-key.view';

interface ApiKeyRow {
  id: string;
  name: string | null;
  scope: ApiKeyScope;
  key_prefix: string;
  created_at: Date;
  revoked_at: Date | null;
}

/** An active key as the guard knows it: its company and what it may do. */
export interface VerifiedApiKey {
  id: string;
  scope: ApiKeyScope;
  company: Company;
}

export interface NewApiKey {
  name: string | null;
  scope: ApiKeyScope;
  keyHash: Buffer;
  keyPrefix: string;
}

const COLUMNS = 'k.id, k.name, k.scope, k.key_prefix, k.created_at, k.revoked_at';
const API_KEYS: KeysetSource = {
  table: 'api_keys',
  alias: 'k',
  select: `SELECT ${COLUMNS} FROM api_keys k`,
  orderKeys: ['created_at', 'id'],
};

function toView(row: ApiKeyRow): ApiKeyView {
  return {
    id: row.id,
    object: 'api_key',
    name: row.name,
    scope: row.scope,
    prefix: row.key_prefix,
    createdAt: row.created_at.toISOString(),
    revokedAt: row.revoked_at?.toISOString() ?? null,
  };
}

/** API keys, by company — except the lookup by hash, which is how the company is found. */
@Injectable()
export class ApiKeysRepository {
  constructor(private readonly txHost: TransactionHost<PgTransactionalAdapter>) {}

  @Transactional(Propagation.Mandatory)
  async insert(companyId: string, key: NewApiKey): Promise<ApiKeyView> {
    const rows = await this.txHost.tx.query<ApiKeyRow>(
      `INSERT INTO api_keys AS k (id, company_id, key_hash, key_prefix, name, scope)
       VALUES ($1, $2, $3, $4, $5, $6)
       RETURNING ${COLUMNS}`,
      [randomUUID(), companyId, key.keyHash, key.keyPrefix, key.name, key.scope],
    );
    return toView(rows[0]);
  }

  /** The active (not revoked) key with this hash, with its company; null for an unknown or revoked key. */
  async findActiveByHash(keyHash: Buffer): Promise<VerifiedApiKey | null> {
    const rows = await this.txHost.tx.query<{
      key_id: string;
      scope: ApiKeyScope;
      id: string;
      name: string;
      country_code: string;
      currency: string;
    }>(
      `SELECT k.id AS key_id, k.scope, c.id, c.name, c.country_code, c.currency
         FROM api_keys k JOIN companies c ON c.id = k.company_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
      [keyHash],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      id: row.key_id,
      scope: row.scope,
      company: { id: row.id, name: row.name, countryCode: row.country_code, currency: row.currency },
    };
  }

  async findById(companyId: string, apiKeyId: string): Promise<ApiKeyView | null> {
    const rows = await this.txHost.tx.query<ApiKeyRow>(
      `SELECT ${COLUMNS} FROM api_keys k WHERE k.company_id = $1 AND k.id = $2`,
      [companyId, apiKeyId],
    );
    return rows[0] ? toView(rows[0]) : null;
  }

  async list(companyId: string, page: PageRequest): Promise<Page<ApiKeyView>> {
    return keysetPage(this.txHost.tx, API_KEYS, companyId, page, [], toView);
  }

  /**
   * Locks the company's active read_write keys until commit and returns their ids. Revocations
   * of read_write keys take these locks first, so two of them at once cannot both see the other
   * key active and leave none (READ COMMITTED re-checks `revoked_at IS NULL` after the wait).
   */
  @Transactional(Propagation.Mandatory)
  async lockActiveReadWriteKeys(companyId: string): Promise<string[]> {
    const rows = await this.txHost.tx.query<{ id: string }>(
      `SELECT id FROM api_keys
        WHERE company_id = $1 AND scope = 'read_write' AND revoked_at IS NULL
        ORDER BY id
          FOR UPDATE`,
      [companyId],
    );
    return rows.map((row) => row.id);
  }

  /**
   * Revokes a key; its trigger announces the revocation on `api_key_revoked` at commit.
   * @returns the revoked key and its hash, or null when this company has no such active key
   */
  @Transactional(Propagation.Mandatory)
  async revoke(companyId: string, apiKeyId: string): Promise<{ key: ApiKeyView; keyHash: Buffer } | null> {
    const rows = await this.txHost.tx.query<ApiKeyRow & { key_hash: Buffer }>(
      `WITH revoked AS (
         UPDATE api_keys SET revoked_at = now()
          WHERE company_id = $1 AND id = $2 AND revoked_at IS NULL
         RETURNING *)
       SELECT ${COLUMNS}, k.key_hash FROM revoked k`,
      [companyId, apiKeyId],
    );
    return rows[0] ? { key: toView(rows[0]), keyHash: rows[0].key_hash } : null;
  }
}
