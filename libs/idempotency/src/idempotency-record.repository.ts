import { type DeferredWrite, isUniqueViolation } from '@ledgerkey/database';
import { IdempotencyKeyInUseError, IdempotencyLeaseLostError } from './idempotency.errors';
import type { StalledOperation, StalledOperationsQuery } from './external-effect';
import type { FinishedOutcome, IdempotencyRecordStore, KeyClaim } from './idempotency-ports';
import type {
  FinishedRecord,
  IdempotencyKeyRef,
  IdempotencyRecord,
  IdempotencyRecordState,
  Lease,
  UnfinishedRecord,
} from './idempotency-record';

/** Runs SQL in the caller's current transaction. */
export interface TransactionalSql {
  /**
   * Runs one SELECT-shaped statement (or an INSERT without RETURNING) and returns its rows.
   * @throws Error when no transaction is active: a key's lock and its record must commit with
   *   the operation, never on their own
   */
  query<TRow>(text: string, values: unknown[]): Promise<TRow[]>;
  /**
   * A write whose answer nobody reads: it may be sent with the transaction's other last writes in
   * one statement before COMMIT (`DeferredWrites`); its failure then surfaces there.
   */
  write(write: DeferredWrite): Promise<void>;
}

/** Runs one statement on its own connection turn, outside any transaction (autocommit). */
export interface AutocommitSql {
  query<TRow>(text: string, values: unknown[]): Promise<TRow[]>;
}

interface RecordRow {
  state: IdempotencyRecordState | null;
  fingerprint: Buffer;
  request_digest?: Buffer | null;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
  response_sealed: boolean;
  expires_at: Date;
  lease_expires_at: Date | null;
  recovery_point: string | null;
  attempt: number;
}

interface LeaseRow {
  attempt: number;
  lease_expires_at: Date;
}

const KEY_MATCH = 'company_id = $1 AND operation = $2 AND idempotency_key = $3';

/** The `IdempotencyRecordStore` on PostgreSQL (`idempotency_records`). */
export class IdempotencyRecordRepository implements IdempotencyRecordStore {
  constructor(
    private readonly sql: TransactionalSql,
    /** For `findFinished`, which needs no transaction. */
    private readonly reads: AutocommitSql,
  ) {}

  async findFinished(ref: IdempotencyKeyRef, now: Date): Promise<FinishedRecord | null> {
    // The primary key lookup, in autocommit: no BEGIN/COMMIT round trips and no lock. A record
    // that is still unfinished, or none, sends the caller down the claiming path.
    const [row] = await this.reads.query<RecordRow>(
      `SELECT state, fingerprint, request_digest, response_status, response_headers, response_body,
              response_sealed, expires_at, lease_expires_at, recovery_point, attempt
         FROM idempotency_records
        WHERE ${KEY_MATCH} AND state IN ('completed', 'failed_final') AND expires_at > $4`,
      [...keyOf(ref), now],
    );
    return row ? (recordOf(row) as FinishedRecord) : null;
  }

  async claim(ref: IdempotencyKeyRef, now: Date): Promise<KeyClaim> {
    // One round trip: a lock-free read first (a finished record needs no lock), then, only when
    // needed, pg_try_advisory_xact_lock and a second read with a fresh snapshot (see migration
    // 1765300000000). The lock answers at once, spans every process on this database, and is
    // released by COMMIT or ROLLBACK, also when a crashed process's connection drops.
    // The join adds a finished record's request digest (the function predates it), so a replay
    // found here can be kept by the replay cache. A finished record never changes; should the
    // statement's snapshot not show one the function found, the digest is null: not kept.
    const [row] = await this.sql.query<RecordRow & { claimed: boolean }>(
      `SELECT c.*, i.request_digest
         FROM claim_idempotency_key($1, $2, $3, $4) c
         LEFT JOIN idempotency_records i
           ON i.company_id = $1 AND i.operation = $2 AND i.idempotency_key = $3
          AND c.state IN ('completed', 'failed_final')`,
      [ref.tenantId, ref.operation, ref.key, now],
    );
    return { held: row.claimed, record: recordOf(row) } as KeyClaim;
  }

  async insertFinished(
    ref: IdempotencyKeyRef,
    outcome: FinishedOutcome & { fingerprint: Buffer; requestDigest: Buffer | null },
    now: Date,
  ): Promise<void> {
    // The operation's last write: it travels with the document's entry and event when the
    // transaction batches them (one round trip before COMMIT).
    await this.sql.write({
      kind: 'idempotency_records',
      ctes: (bind) => {
        const created = bind(now);
        const values = [...keyOf(ref), outcome.fingerprint, ...outcomeColumns(outcome)].map(bind);
        return [
          [
            'record',
            `INSERT INTO idempotency_records
               (company_id, operation, idempotency_key, fingerprint, state, response_status, response_headers,
                response_body, response_sealed, expires_at, created_at, updated_at, request_digest)
             VALUES (${values.join(', ')}, ${created}, ${created}, ${bind(outcome.requestDigest)})`,
          ],
        ];
      },
      errorOf: keyInUse,
    });
  }

  async begin(
    ref: IdempotencyKeyRef,
    start: {
      fingerprint: Buffer;
      requestDigest?: Buffer | null;
      leaseExpiresAt: Date;
      recoveryPoint: string;
      expiresAt: Date;
    },
    now: Date,
  ): Promise<Lease> {
    await this.insert(
      `INSERT INTO idempotency_records
         (company_id, operation, idempotency_key, fingerprint, state, lease_expires_at, recovery_point,
          attempt, response_headers, expires_at, created_at, updated_at, request_digest)
       VALUES ($1, $2, $3, $4, 'in_progress', $5, $6, 1, NULL, $7, $8, $8, $9)`,
      [
        ...keyOf(ref),
        start.fingerprint,
        start.leaseExpiresAt,
        start.recoveryPoint,
        start.expiresAt,
        now,
        start.requestDigest ?? null,
      ],
    );
    return { attempt: 1, expiresAt: start.leaseExpiresAt };
  }

  async takeOver(
    ref: IdempotencyKeyRef,
    record: UnfinishedRecord,
    leaseExpiresAt: Date,
    now: Date,
  ): Promise<Lease | null> {
    // Guarded by the attempt the caller saw and by the state that allows a take-over, so two
    // requests that both saw an expired lease cannot both take the operation over.
    const [row] = await this.sql.query<LeaseRow>(
      `WITH taken AS (
         UPDATE idempotency_records
            SET state = 'in_progress', attempt = attempt + 1, lease_expires_at = $5, updated_at = $6
          WHERE ${KEY_MATCH} AND attempt = $4
            AND (state = 'failed_retryable' OR (state = 'in_progress' AND lease_expires_at <= $6))
          RETURNING attempt, lease_expires_at)
       SELECT * FROM taken`,
      [...keyOf(ref), record.attempt, leaseExpiresAt, now],
    );
    return row ? leaseOf(row) : null;
  }

  async checkpoint(
    ref: IdempotencyKeyRef,
    lease: Lease,
    recoveryPoint: string,
    leaseExpiresAt: Date,
    now: Date,
  ): Promise<Lease> {
    const row = await this.transition(
      ref,
      lease,
      `recovery_point = $5, lease_expires_at = $6, updated_at = $7`,
      [recoveryPoint, leaseExpiresAt, now],
    );
    return leaseOf(row);
  }

  async hold(ref: IdempotencyKeyRef, lease: Lease): Promise<void> {
    // A row lock without a write: a concurrent take-over (an UPDATE of this row) waits for our
    // COMMIT and then matches nothing, because the key is finished by then.
    const rows = await this.sql.query<{ attempt: number }>(
      `SELECT attempt FROM idempotency_records
        WHERE ${KEY_MATCH} AND attempt = $4 AND state = 'in_progress'
          FOR UPDATE`,
      [...keyOf(ref), lease.attempt],
    );
    if (rows.length === 0) throw new IdempotencyLeaseLostError(ref.operation, lease.attempt);
  }

  async findStalled(query: StalledOperationsQuery, now: Date): Promise<StalledOperation[]> {
    // ix_idempotency_records_unfinished holds only unfinished rows (a handful): the scan is small
    // whatever the table's size. Due: nobody holds it (released, or the lease ran out) and the
    // backoff after the previous attempt has passed; attempts from maxAttempts on are left alone.
    const rows = await this.reads.query<{
      company_id: string;
      operation: string;
      idempotency_key: string;
      state: 'in_progress' | 'failed_retryable';
      attempt: number;
      recovery_point: string | null;
      created_at: Date;
    }>(
      `SELECT company_id, operation, idempotency_key, state, attempt, recovery_point, created_at
         FROM idempotency_records
        WHERE state IN ('in_progress', 'failed_retryable')
          AND operation = $1
          AND attempt < $2
          AND (state = 'failed_retryable' OR lease_expires_at <= $5)
          AND CASE WHEN state = 'in_progress' THEN lease_expires_at ELSE updated_at END
              + CASE WHEN attempt = 1 THEN 0 ELSE least($3 * power(2, attempt - 2), $4) END
                * interval '1 millisecond' <= $5
        ORDER BY updated_at
        LIMIT $6`,
      [query.operation, query.maxAttempts, query.retryBaseMs, query.retryMaxMs, now, query.limit],
    );
    return rows.map((row) => ({
      ref: { tenantId: row.company_id, operation: row.operation, key: row.idempotency_key },
      state: row.state,
      attempt: row.attempt,
      recoveryPoint: row.recovery_point,
      startedAt: row.created_at,
    }));
  }

  async finish(ref: IdempotencyKeyRef, lease: Lease, outcome: FinishedOutcome, now: Date): Promise<void> {
    await this.transition(
      ref,
      lease,
      `state = $5, response_status = $6, response_headers = $7, response_body = $8, response_sealed = $9,
       expires_at = $10, lease_expires_at = NULL, updated_at = $11`,
      [...outcomeColumns(outcome), now],
    );
  }

  async failRetryable(
    ref: IdempotencyKeyRef,
    lease: Lease,
    recoveryPoint: string | null,
    now: Date,
  ): Promise<void> {
    await this.transition(
      ref,
      lease,
      `state = 'failed_retryable', lease_expires_at = NULL,
       recovery_point = coalesce($5, recovery_point), updated_at = $6`,
      [recoveryPoint, now],
    );
  }

  /**
   * An update of a running operation, fenced by its attempt: after a take-over the old holder
   * matches no row. The row lock serializes it with a concurrent take-over.
   */
  private async transition(
    ref: IdempotencyKeyRef,
    lease: Lease,
    assignments: string,
    values: unknown[],
  ): Promise<LeaseRow> {
    const [row] = await this.sql.query<LeaseRow>(
      `WITH changed AS (
         UPDATE idempotency_records SET ${assignments}
          WHERE ${KEY_MATCH} AND attempt = $4 AND state = 'in_progress'
          RETURNING attempt, lease_expires_at)
       SELECT * FROM changed`,
      [...keyOf(ref), lease.attempt, ...values],
    );
    if (!row) throw new IdempotencyLeaseLostError(ref.operation, lease.attempt);
    return row;
  }

  /**
   * A plain INSERT: a primary-key violation means the per-key lock was bypassed (e.g. two keys
   * whose lock hashes collide) and "one execution per key" was about to break; the violation
   * aborts the whole transaction and the request answers 409.
   */
  private async insert(text: string, values: unknown[]): Promise<void> {
    try {
      await this.sql.query(text, values);
    } catch (error) {
      throw keyInUse(error) ?? error;
    }
  }
}

/**
 * A primary-key violation of a record: the per-key lock was bypassed (e.g. two keys whose lock
 * hashes collide) and "one execution per key" was about to break; the request answers 409.
 */
function keyInUse(error: unknown): IdempotencyKeyInUseError | undefined {
  return isUniqueViolation(error, 'pk_idempotency_records')
    ? new IdempotencyKeyInUseError({ cause: error })
    : undefined;
}

function keyOf(ref: IdempotencyKeyRef): [string, string, string] {
  return [ref.tenantId, ref.operation, ref.key];
}

/** state, response_status, response_headers, response_body, response_sealed, expires_at */
function outcomeColumns(outcome: FinishedOutcome): unknown[] {
  const { response } = outcome;
  return [
    outcome.state,
    response.status,
    JSON.stringify(response.headers),
    response.body,
    response.sealed,
    outcome.expiresAt,
  ];
}

function leaseOf(row: LeaseRow): Lease {
  return { attempt: row.attempt, expiresAt: row.lease_expires_at };
}

function recordOf(row: RecordRow): IdempotencyRecord | null {
  const base = {
    fingerprint: row.fingerprint,
    expiresAt: row.expires_at,
    attempt: row.attempt,
    recoveryPoint: row.recovery_point,
    requestDigest: row.request_digest ?? null,
  };
  switch (row.state) {
    case null:
      return null;
    case 'completed':
    case 'failed_final':
      return {
        ...base,
        state: row.state,
        response: {
          status: row.response_status!,
          headers: row.response_headers!,
          body: row.response_body!,
          sealed: row.response_sealed,
        },
      };
    case 'in_progress':
      return { ...base, state: 'in_progress', leaseExpiresAt: row.lease_expires_at! };
    case 'failed_retryable':
      return { ...base, state: 'failed_retryable' };
  }
}
