import { Injectable } from '@nestjs/common';
import {
  Propagation,
  Transactional,
  TransactionHost,
  type PgTransactionalAdapter,
  type Sql,
} from '@ledgerkey/database';
import type {
  DiscrepancyKind,
  DiscrepancyView,
  ReconciliationRunView,
  ReconciliationSummaryView,
} from './reconciliation-run.view';

interface RunRow {
  id: string;
  provider: string;
  range_from: Date;
  range_to: Date;
  status: 'running' | 'completed';
  trigger: 'api' | 'schedule';
  created_at: Date;
  completed_at: Date | null;
  discrepancies: Array<{
    kind: DiscrepancyView['kind'];
    resolution: DiscrepancyView['resolution'];
    object_type: DiscrepancyView['objectType'];
    provider_object_id: string | null;
    local_id: string | null;
    provider_value: string | null;
    local_value: string | null;
    detail: string;
    first_seen_at: string;
  }> | null;
}

/** What a run counted, kept beside its discrepancies (a run finds none when the books agree). */
type RunCounts = Pick<ReconciliationSummaryView, 'charges' | 'payouts' | 'payments'>;

const SELECT_RUN = `
  SELECT r.id, r.provider, r.range_from, r.range_to, r.status, r.trigger, r.created_at, r.completed_at,
         (SELECT json_agg(json_build_object(
                   'kind', d.kind, 'resolution', d.resolution, 'object_type', d.object_type,
                   'provider_object_id', d.provider_object_id, 'local_id', d.local_id,
                   'provider_value', d.provider_value, 'local_value', d.local_value, 'detail', d.detail,
                   'first_seen_at', d.first_seen_at) ORDER BY d.position)
            FROM reconciliation_discrepancies d
           WHERE d.company_id = r.company_id AND d.run_id = r.id) AS discrepancies,
         r.counts
    FROM reconciliation_runs r`;

function toView(row: RunRow & { counts: RunCounts | null }): ReconciliationRunView {
  const discrepancies: DiscrepancyView[] = (row.discrepancies ?? []).map((d) => ({
    kind: d.kind,
    resolution: d.resolution,
    objectType: d.object_type,
    providerObjectId: d.provider_object_id,
    localId: d.local_id,
    providerValue: d.provider_value,
    localValue: d.local_value,
    detail: d.detail,
    firstSeenAt: new Date(d.first_seen_at).toISOString(),
  }));
  return {
    id: row.id,
    object: 'reconciliation_run',
    provider: row.provider,
    from: row.range_from.toISOString(),
    to: row.range_to.toISOString(),
    status: row.status,
    trigger: row.trigger,
    summary:
      row.counts === null
        ? null
        : {
            ...row.counts,
            autoResolved: discrepancies.filter((d) => d.resolution === 'auto_resolved').length,
            needsReview: discrepancies.filter((d) => d.resolution === 'needs_review').length,
          },
    discrepancies,
    createdAt: row.created_at.toISOString(),
    completedAt: row.completed_at?.toISOString() ?? null,
  };
}

/** Open discrepancies (needs_review in each company's latest completed run), for the metrics. */
export interface OpenDiscrepancies {
  kind: DiscrepancyKind;
  count: number;
  oldestAgeSeconds: number;
}

/** Reconciliation runs of one company. Every method takes the company id first. */
@Injectable()
export class ReconciliationRunsRepository {
  constructor(private readonly txHost: TransactionHost<PgTransactionalAdapter>) {}

  async findById(companyId: string, runId: string): Promise<ReconciliationRunView | null> {
    const rows = await this.txHost.tx.query<RunRow & { counts: RunCounts | null }>(
      `${SELECT_RUN} WHERE r.company_id = $1 AND r.id = $2`,
      [companyId, runId],
    );
    return rows[0] ? toView(rows[0]) : null;
  }

  /** The running run the key started, or null (`uq_reconciliation_runs_company_running_key`). */
  async findRunningByKey(companyId: string, idempotencyKey: string): Promise<ReconciliationRunView | null> {
    const rows = await this.txHost.tx.query<RunRow & { counts: RunCounts | null }>(
      `${SELECT_RUN} WHERE r.company_id = $1 AND r.idempotency_key = $2 AND r.status = 'running'`,
      [companyId, idempotencyKey],
    );
    return rows[0] ? toView(rows[0]) : null;
  }

  @Transactional(Propagation.Mandatory)
  async insert(companyId: string, run: ReconciliationRunView, idempotencyKey: string): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO reconciliation_runs (company_id, id, provider, range_from, range_to, status, trigger,
                                        idempotency_key, created_at)
       VALUES ($1, $2, $3, $4, $5, 'running', $6, $7, $8)`,
      [companyId, run.id, run.provider, run.from, run.to, run.trigger, idempotencyKey, run.createdAt],
    );
  }

  /**
   * Completes a running run with its discrepancies. A discrepancy an earlier run of the company
   * reported open (same kind, object and id) keeps that run's `firstSeenAt`.
   * @returns false when the run was not running any more
   */
  @Transactional(Propagation.Mandatory)
  async complete(
    companyId: string,
    runId: string,
    counts: RunCounts,
    discrepancies: Array<Omit<DiscrepancyView, 'firstSeenAt'>>,
    at: Date,
  ): Promise<boolean> {
    const changed = await this.txHost.tx.query<unknown>(
      `WITH changed AS (
         UPDATE reconciliation_runs SET status = 'completed', completed_at = $3, counts = $4
          WHERE company_id = $1 AND id = $2 AND status = 'running' RETURNING 1)
       SELECT 1 FROM changed`,
      [companyId, runId, at, JSON.stringify(counts)],
    );
    if (changed.length !== 1) return false;
    if (discrepancies.length === 0) return true;
    await this.txHost.tx.query(
      `INSERT INTO reconciliation_discrepancies (company_id, run_id, position, kind, resolution, object_type,
                                                 provider_object_id, local_id, provider_value, local_value,
                                                 detail, first_seen_at)
       SELECT $1, $2, d.position, d.kind, d.resolution, d.object_type, d.provider_object_id, d.local_id,
              d.provider_value, d.local_value, d.detail,
              coalesce((SELECT min(p.first_seen_at) FROM reconciliation_discrepancies p
                         WHERE p.company_id = $1 AND p.run_id <> $2 AND p.resolution = 'needs_review'
                           AND p.kind = d.kind AND p.object_type = d.object_type
                           AND p.provider_object_id IS NOT DISTINCT FROM d.provider_object_id
                           AND p.local_id IS NOT DISTINCT FROM d.local_id), $3)
         FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::uuid[], $9::text[], $10::text[], $11::text[])
              WITH ORDINALITY AS d(kind, resolution, object_type, provider_object_id, local_id, provider_value,
                                   local_value, detail, position)`,
      [
        companyId,
        runId,
        at,
        discrepancies.map((d) => d.kind),
        discrepancies.map((d) => d.resolution),
        discrepancies.map((d) => d.objectType),
        discrepancies.map((d) => d.providerObjectId),
        discrepancies.map((d) => d.localId),
        discrepancies.map((d) => d.providerValue?.slice(0, 255) ?? null),
        discrepancies.map((d) => d.localValue?.slice(0, 255) ?? null),
        discrepancies.map((d) => d.detail.slice(0, 1000)),
      ],
    );
    return true;
  }

  /**
   * Companies with payments or settlements since `since`, for the scheduled runs (across tenants:
   * the worker's, like the recovery's).
   */
  async companiesActiveSince(since: Date): Promise<string[]> {
    const rows = await this.txHost.tx.query<{ company_id: string }>(
      `SELECT DISTINCT company_id FROM payments WHERE created_at >= $1`,
      [since],
    );
    return rows.map((row) => row.company_id);
  }
}

/**
 * Needs-review discrepancies of each company's latest completed run, by kind, with the age of the
 * oldest (from when a run first found it). Across companies: for the metrics.
 */
export async function readOpenDiscrepancies(db: Sql): Promise<OpenDiscrepancies[]> {
  const rows = await db.query<{ kind: DiscrepancyKind; count: string; oldest: string }>(
    `WITH latest AS (
       SELECT DISTINCT ON (company_id) company_id, id FROM reconciliation_runs
        WHERE status = 'completed' ORDER BY company_id, completed_at DESC, id)
     SELECT d.kind, count(*)::text AS count,
            extract(epoch FROM now() - min(d.first_seen_at))::text AS oldest
       FROM reconciliation_discrepancies d
       JOIN latest l ON l.company_id = d.company_id AND l.id = d.run_id
      WHERE d.resolution = 'needs_review'
      GROUP BY d.kind`,
  );
  return rows.map((row) => ({
    kind: row.kind,
    count: Number(row.count),
    oldestAgeSeconds: Number(row.oldest),
  }));
}
