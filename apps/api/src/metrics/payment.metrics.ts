import { Injectable, Logger } from '@nestjs/common';
import { DatabasePool } from '@ledgerkey/database';
import { readUnfinishedOperations, type UnfinishedOperations } from '@ledgerkey/idempotency';
import {
  DISCREPANCY_KINDS,
  PAYMENT_RECOVERY_RESULTS,
  PROVIDER_EVENT_RESULTS,
  readOpenDiscrepancies,
  type OpenDiscrepancies,
  type PaymentRecoveryResult,
  type ProviderEventMetricResult,
  type PaymentsObserver,
  type ProviderCall,
  type ProviderCallOutcome,
} from '@ledgerkey/payments';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Payments: provider calls by outcome with their latency and recoveries by result (this process's,
 * as the payments lib reports them), and operations left unfinished by age (read from the database
 * at scrape time: the same for every process; aggregate with max).
 */
@Injectable()
export class PaymentMetrics implements PaymentsObserver {
  private readonly logger = new Logger('Metrics');
  private readonly calls: Histogram<'call' | 'outcome'>;
  private readonly recoveries: Counter<'result'>;
  private readonly providerEvents: Counter<'result'>;
  private discrepancyReading: Promise<OpenDiscrepancies[]> | undefined;
  private pendingReading: Promise<UnfinishedOperations[]> | undefined;

  constructor(registry: Registry, pool: DatabasePool) {
    this.calls = new Histogram({
      name: 'ledgerkey_payment_provider_call_duration_seconds',
      help:
        'Calls to the payment provider by call (create_charge, find_charge) and outcome (succeeded, failed, ' +
        'rejected, or why unknown: timeout, no_answer, server_error, …; lookups: found, not_found, unavailable, …).',
      labelNames: ['call', 'outcome'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
    this.recoveries = new Counter({
      name: 'ledgerkey_payment_recoveries_total',
      help: 'Payments the recovery worker of this process took over, by result (succeeded, failed, pending, skipped, error).',
      labelNames: ['result'],
      registers: [registry],
    });
    for (const result of PAYMENT_RECOVERY_RESULTS) this.recoveries.inc({ result }, 0);
    this.providerEvents = new Counter({
      name: 'ledgerkey_provider_events_total',
      help:
        "The payment provider's webhook deliveries received by this process, by result: applied, duplicate " +
        '(recorded before: nothing applied), parked (recorded, applied later), ignored (recorded or acknowledged, ' +
        'nothing to apply), rejected (bad signature, stale timestamp, malformed body, unknown type: nothing ' +
        'recorded). Parked events a worker applies later count again with their final result.',
      labelNames: ['result'],
      registers: [registry],
    });
    for (const result of PROVIDER_EVENT_RESULTS) this.providerEvents.inc({ result }, 0);
    const open: Gauge<'kind'> = new Gauge({
      name: 'ledgerkey_reconciliation_open_discrepancies',
      help:
        "Discrepancies that need review in each company's latest completed reconciliation run, by kind " +
        '(missing_locally, missing_at_provider, amount_mismatch, status_mismatch).',
      labelNames: ['kind'],
      registers: [registry],
      collect: () =>
        this.refreshDiscrepancies(open, pool, (rows) => {
          open.reset();
          for (const kind of DISCREPANCY_KINDS) open.set({ kind }, 0);
          for (const row of rows) open.set({ kind: row.kind }, row.count);
        }),
    });
    const oldestOpen: Gauge = new Gauge({
      name: 'ledgerkey_reconciliation_oldest_open_discrepancy_age_seconds',
      help: 'Age of the oldest discrepancy still needing review, since a run first found it (0 when none).',
      registers: [registry],
      collect: () =>
        this.refreshDiscrepancies(oldestOpen, pool, (rows) => {
          oldestOpen.set(rows.reduce((oldest, row) => Math.max(oldest, row.oldestAgeSeconds), 0));
        }),
    });
    const unfinished: Gauge<'operation' | 'state' | 'age'> = new Gauge({
      name: 'ledgerkey_idempotency_unfinished_operations',
      help:
        'Operations with an effect outside the database that have no outcome yet (payments processing), by ' +
        'operation, state (in_progress, failed_retryable) and age since they started (under_1m, 1m_to_10m, ' +
        '10m_to_1h, over_1h): old ones are stuck.',
      labelNames: ['operation', 'state', 'age'],
      registers: [registry],
      collect: () =>
        this.refresh(unfinished, pool, (rows) => {
          unfinished.reset();
          for (const row of rows)
            unfinished.set({ operation: row.operation, state: row.state, age: row.age }, row.count);
        }),
    });
    const oldest: Gauge<'operation'> = new Gauge({
      name: 'ledgerkey_idempotency_oldest_unfinished_operation_age_seconds',
      help: 'Age of the oldest unfinished operation, by operation (no sample when none is unfinished).',
      labelNames: ['operation'],
      registers: [registry],
      collect: () =>
        this.refresh(oldest, pool, (rows) => {
          oldest.reset();
          const ages = new Map<string, number>();
          for (const row of rows)
            ages.set(row.operation, Math.max(ages.get(row.operation) ?? 0, row.oldestAgeSeconds));
          for (const [operation, age] of ages) oldest.set({ operation }, age);
        }),
    });
  }

  providerCall(call: ProviderCall, outcome: ProviderCallOutcome, seconds: number): void {
    this.calls.observe({ call, outcome }, seconds);
  }

  recovery(result: PaymentRecoveryResult): void {
    this.recoveries.inc({ result });
  }

  providerEvent(result: ProviderEventMetricResult): void {
    this.providerEvents.inc({ result });
  }

  /** Both discrepancy gauges come from one query per scrape. */
  private async refreshDiscrepancies(
    metric: Gauge<'kind'> | Gauge,
    pool: DatabasePool,
    apply: (rows: OpenDiscrepancies[]) => void,
  ): Promise<void> {
    this.discrepancyReading ??= readOpenDiscrepancies(pool).finally(() => {
      this.discrepancyReading = undefined;
    });
    try {
      apply(await this.discrepancyReading);
    } catch (error) {
      metric.reset();
      this.logger.warn({ err: error }, 'could not read the open discrepancies from the database');
    }
  }

  /** Both gauges come from one query per scrape (prom-client collects them concurrently). */
  private async refresh(
    metric: Gauge<'operation' | 'state' | 'age'> | Gauge<'operation'>,
    pool: DatabasePool,
    apply: (rows: UnfinishedOperations[]) => void,
  ): Promise<void> {
    this.pendingReading ??= readUnfinishedOperations(pool).finally(() => {
      this.pendingReading = undefined;
    });
    try {
      apply(await this.pendingReading);
    } catch (error) {
      metric.reset();
      this.logger.warn({ err: error }, 'could not read the unfinished operations from the database');
    }
  }
}
