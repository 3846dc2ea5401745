import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { JobRegistry, JobTasks } from '@ledgerkey/jobs';
import { DeliverWebhookHandler } from './deliver-webhook/deliver-webhook.handler';
import { FanOutEventHandler } from './fan-out-event/fan-out-event.handler';
import { SweepWebhookLeasesHandler } from './sweep-webhook-leases/sweep-webhook-leases.handler';
import { WEBHOOK_OPTIONS, type WebhookOptions } from './webhook-options';

/**
 * The webhook tasks of the job queue: fan-out of an event, one delivery attempt, and the lease
 * sweeper (at every worker's start, every minute by crontab across all workers, and on each
 * worker's own interval).
 */
@Injectable()
export class WebhookJobs implements OnModuleInit {
  private readonly logger = new Logger('WebhookJobs');

  constructor(
    private readonly registry: JobRegistry,
    private readonly fanOut: FanOutEventHandler,
    private readonly deliver: DeliverWebhookHandler,
    private readonly sweeper: SweepWebhookLeasesHandler,
    @Inject(WEBHOOK_OPTIONS) private readonly options: WebhookOptions,
  ) {}

  onModuleInit(): void {
    this.registry.register({
      task: JobTasks.FanOutEvent,
      run: async ({ companyId, eventId }) => {
        await this.fanOut.execute(companyId, eventId);
      },
    });
    this.registry.register({
      task: JobTasks.DeliverWebhook,
      run: async ({ companyId, deliveryId }) => {
        await this.deliver.execute(companyId, deliveryId);
      },
    });
    this.registry.register({
      task: JobTasks.SweepWebhookLeases,
      run: () => this.sweep(),
      schedule: '* * * * *',
      inEveryWorker: { intervalMs: this.options.sweepIntervalMs },
    });
  }

  private async sweep(): Promise<void> {
    const result = await this.sweeper.execute();
    if (result.abandoned + result.requeued + result.fanOutsRequeued > 0) {
      this.logger.warn(`lease sweep recovered work of stopped workers: ${JSON.stringify(result)}`);
    }
  }
}
