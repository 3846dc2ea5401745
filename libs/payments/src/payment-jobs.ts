import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { JobRegistry, JobTasks } from '@ledgerkey/jobs';
import { PAYMENTS_OPTIONS, type PaymentsOptions } from './payments-options';
import { RecoverPaymentsHandler } from './recover-payments/recover-payments.handler';

/**
 * The payments task of the job queue: the recovery, every minute by crontab across all workers and
 * every PAYMENT_RECOVERY_INTERVAL_MS in each worker (one run at a time per process).
 */
@Injectable()
export class PaymentJobs implements OnModuleInit {
  private readonly logger = new Logger('PaymentJobs');

  constructor(
    private readonly registry: JobRegistry,
    private readonly recover: RecoverPaymentsHandler,
    @Inject(PAYMENTS_OPTIONS) private readonly options: PaymentsOptions,
  ) {}

  onModuleInit(): void {
    this.registry.register({
      task: JobTasks.RecoverPayments,
      run: () => this.recoverPayments(),
      schedule: '* * * * *',
      inEveryWorker: { intervalMs: this.options.config.recovery.intervalMs },
    });
  }

  private async recoverPayments(): Promise<void> {
    const report = await this.recover.execute();
    if (report.succeeded + report.failed + report.pending + report.error > 0) {
      this.logger.log(`payment recovery: ${JSON.stringify(report)}`);
    }
  }
}
