import { Injectable } from '@nestjs/common';
import {
  Propagation,
  Transactional,
  TransactionHost,
  type TypeOrmTransactionalAdapter,
} from '@ledgerkey/database';
import type { RecordedResponse } from './idempotency.options';

export interface IdempotencyKeyRef {
  tenantId: string;
  operation: string;
  key: string;
}

export interface IdempotencyRecord {
  fingerprint: Buffer;
  response: RecordedResponse;
  expiresAt: Date;
}

interface RecordRow {
  fingerprint: Buffer;
  response_status: number;
  response_headers: Record<string, string>;
  response_body: string;
  expires_at: Date;
  expired: boolean;
}

@Injectable()
export class IdempotencyRecordRepository {
  constructor(private readonly txHost: TransactionHost<TypeOrmTransactionalAdapter>) {}

  /**
   * Takes the per-key lock for the rest of the current transaction, without waiting.
   * `pg_try_advisory_xact_lock` answers at once, so a concurrent duplicate gets 409 instead of
   * queueing behind the first; the lock spans all API processes on this database and is
   * released by COMMIT or ROLLBACK, including when a crashed process's connection drops.
   * @returns false when another transaction holds the key
   */
  @Transactional(Propagation.Mandatory)
  async tryLock(ref: IdempotencyKeyRef): Promise<boolean> {
    const [row] = await this.txHost.tx.query<Array<{ locked: boolean }>>(
      `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked`,
      [`${ref.tenantId}\n${ref.operation}\n${ref.key}`],
    );
    return row.locked;
  }

  /**
   * Reads the record after the lock is held (a separate statement, so its snapshot includes
   * anything committed by the transaction that held the lock before us).
   * Expired records are deleted and reported as absent: after the window a key is new.
   */
  @Transactional(Propagation.Mandatory)
  async findLive(ref: IdempotencyKeyRef): Promise<IdempotencyRecord | null> {
    const rows = await this.txHost.tx.query<RecordRow[]>(
      `SELECT fingerprint, response_status, response_headers, response_body, expires_at,
              expires_at <= now() AS expired
         FROM idempotency_records
        WHERE company_id = $1 AND operation = $2 AND idempotency_key = $3`,
      [ref.tenantId, ref.operation, ref.key],
    );
    const row = rows[0];
    if (!row) return null;
    if (row.expired) {
      await this.txHost.tx.query(
        `DELETE FROM idempotency_records
          WHERE company_id = $1 AND operation = $2 AND idempotency_key = $3`,
        [ref.tenantId, ref.operation, ref.key],
      );
      return null;
    }
    return {
      fingerprint: row.fingerprint,
      response: { status: row.response_status, headers: row.response_headers, body: row.response_body },
      expiresAt: row.expires_at,
    };
  }

  /**
   * Stores the outcome in the same transaction as the effect, so both commit or neither.
   * A plain INSERT: if the primary key already exists the invariant "one execution per key"
   * was about to break, and the unique violation aborts the whole transaction.
   */
  @Transactional(Propagation.Mandatory)
  async insert(
    ref: IdempotencyKeyRef,
    fingerprint: Buffer,
    response: RecordedResponse,
    expiresAt: Date,
  ): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO idempotency_records
         (company_id, operation, idempotency_key, fingerprint, response_status, response_headers,
          response_body, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        ref.tenantId,
        ref.operation,
        ref.key,
        fingerprint,
        response.status,
        JSON.stringify(response.headers),
        response.body,
        expiresAt,
      ],
    );
  }
}
