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

type ClaimRow =
  | { locked: false; fingerprint: null }
  | { locked: true; fingerprint: null }
  | {
      locked: true;
      fingerprint: Buffer;
      response_status: number;
      response_headers: Record<string, string>;
      response_body: string;
      expires_at: Date;
      expired: boolean;
    };

@Injectable()
export class IdempotencyRecordRepository {
  constructor(private readonly txHost: TransactionHost<TypeOrmTransactionalAdapter>) {}

  /**
   * Claims a key for the rest of the current transaction and reads its record, in one round
   * trip (`claim_idempotency_key`: lock first, then read with a fresh snapshot, so the read
   * sees anything the previous holder of the lock committed).
   * The lock is `pg_try_advisory_xact_lock`: it answers at once, so a concurrent duplicate gets
   * 409 instead of queueing behind the first; it spans all API processes on this database and
   * is released by COMMIT or ROLLBACK, including when a crashed process's connection drops.
   * Expired records are deleted and reported as absent: after the window a key is new.
   * @returns `locked: false` when another transaction holds the key
   */
  @Transactional(Propagation.Mandatory)
  async claim(
    ref: IdempotencyKeyRef,
  ): Promise<{ locked: false } | { locked: true; record: IdempotencyRecord | null }> {
    const [row] = await this.txHost.tx.query<ClaimRow[]>(`SELECT * FROM claim_idempotency_key($1, $2, $3)`, [
      ref.tenantId,
      ref.operation,
      ref.key,
    ]);
    if (!row.locked) return { locked: false };
    if (row.fingerprint === null) return { locked: true, record: null };
    if (row.expired) {
      await this.txHost.tx.query(
        `DELETE FROM idempotency_records
          WHERE company_id = $1 AND operation = $2 AND idempotency_key = $3`,
        [ref.tenantId, ref.operation, ref.key],
      );
      return { locked: true, record: null };
    }
    return {
      locked: true,
      record: {
        fingerprint: row.fingerprint,
        response: { status: row.response_status, headers: row.response_headers, body: row.response_body },
        expiresAt: row.expires_at,
      },
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
