import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { IdempotencyKeyInUseError, IdempotentExecutor } from '@ledgerkey/idempotency';
import { JobRegistry, JobTasks } from '@ledgerkey/jobs';
import { PAYMENTS_OPTIONS, type PaymentsOptions } from './payments-options';
import { ReceiveProviderEventHandler } from './provider-events/receive-provider-event.handler';
import {
  CREATE_RECONCILIATION_RUN_OPERATION,
  RunReconciliationHandler,
} from './reconciliation/run-reconciliation.handler';
import { ReconciliationRunsRepository } from './reconciliation/reconciliation-runs.repository';
import { RecoverPaymentsHandler } from './recover-payments/recover-payments.handler';

/** How far back the scheduled reconciliation looks (and which companies it visits). */
const SCHEDULED_RANGE_MS = 7 * 86_400_000;
/** The scheduled range ends this long before the run: charges still in flight are left to the next. */
const SCHEDULED_SETTLE_MS = 5 * 60_000;

/**
 * The payments tasks of the job queue:
 * - the recovery, every minute by crontab across all workers and every PAYMENT_RECOVERY_INTERVAL_MS
 *   in each worker (one run at a time per process);
 * - parked provider events, on the same rhythm;
 * - the scheduled reconciliation, every PAYMENT_RECONCILIATION_INTERVAL_MINUTES (15) by crontab: one
 *   run per company with payments in the last seven days, over those seven days up to five minutes ago. Its Idempotency-Key is the
 *   window (`scheduled-<to>`), so two workers running the same crontab tick make one run.
 */
@Injectable()
export class PaymentJobs implements OnModuleInit {
  private readonly logger = new Logger('PaymentJobs');

  constructor(
    private readonly registry: JobRegistry,
    private readonly recover: RecoverPaymentsHandler,
    private readonly providerEvents: ReceiveProviderEventHandler,
    private readonly reconciliation: RunReconciliationHandler,
    private readonly runs: ReconciliationRunsRepository,
    private readonly executor: IdempotentExecutor,
    @Inject(PAYMENTS_OPTIONS) private readonly options: PaymentsOptions,
  ) {}

  onModuleInit(): void {
    const intervalMs = this.options.config.recovery.intervalMs;
    this.registry.register({
      task: JobTasks.RecoverPayments,
      run: () => this.recoverPayments(),
      schedule: '* * * * *',
      inEveryWorker: { intervalMs },
    });
    this.registry.register({
      task: JobTasks.RetryParkedProviderEvents,
      run: () => this.retryParkedEvents(),
      schedule: '* * * * *',
      inEveryWorker: { intervalMs },
    });
    const minutes = this.options.config.reconciliationIntervalMinutes;
    this.registry.register({
      task: JobTasks.ReconcilePayments,
      run: () => this.reconcile(new Date()),
      // Queue-wide, once per tick; none when PAYMENT_RECONCILIATION_INTERVAL_MINUTES=0.
      schedule: minutes === 0 ? undefined : minutes === 60 ? '0 * * * *' : `*/${minutes} * * * *`,
    });
  }

  private async recoverPayments(): Promise<void> {
    const report = await this.recover.execute();
    if (report.succeeded + report.failed + report.pending + report.error > 0) {
      this.logger.log(`payment recovery: ${JSON.stringify(report)}`);
    }
  }

  private async retryParkedEvents(): Promise<void> {
    const report = await this.providerEvents.retryParked();
    if (report.applied + report.ignored + report.parked > 0) {
      this.logger.log(`parked provider events: ${JSON.stringify(report)}`);
    }
  }

  /** One scheduled run per active company; a company's failure does not stop the others. */
  async reconcile(now: Date): Promise<void> {
    const to = new Date(Math.floor((now.getTime() - SCHEDULED_SETTLE_MS) / 60_000) * 60_000);
    const range = { from: new Date(to.getTime() - SCHEDULED_RANGE_MS).toISOString(), to: to.toISOString() };
    for (const companyId of await this.runs.companiesActiveSince(
      new Date(to.getTime() - SCHEDULED_RANGE_MS),
    )) {
      try {
        const answer = await this.executor.executeExternal({
          operation: CREATE_RECONCILIATION_RUN_OPERATION,
          tenantId: companyId,
          key: `scheduled-${range.to}`,
          payload: range,
          effect: this.reconciliation.forRange(companyId, range, 'schedule'),
        });
        const run = JSON.parse(answer.body) as { id: string; summary: { needsReview: number } | null };
        if ((run.summary?.needsReview ?? 0) > 0) {
          this.logger.warn(
            `reconciliation run ${run.id} (company ${companyId}): ${run.summary?.needsReview} discrepancies need review`,
          );
        }
      } catch (error) {
        if (error instanceof IdempotencyKeyInUseError) continue;
        this.logger.error(
          `scheduled reconciliation of company ${companyId} failed; the next tick tries again`,
          error instanceof Error ? error.stack : error,
        );
      }
    }
  }
}
