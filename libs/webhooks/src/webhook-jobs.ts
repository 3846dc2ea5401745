import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { JobRegistry, JobTasks } from '@ledgerkey/jobs';
import { DeliverWebhookHandler } from './deliver-webhook/deliver-webhook.handler';
import { WebhookDispatcher } from './dispatch-deliveries/webhook-dispatcher';
import { FanOutEventHandler } from './fan-out-event/fan-out-event.handler';
import { SweepWebhookLeasesHandler } from './sweep-webhook-leases/sweep-webhook-leases.handler';
import { WEBHOOK_OPTIONS, type WebhookOptions } from './webhook-options';

/**
 * The webhook side of a worker: the dispatcher (a worker service that delivers due deliveries
 * from their table), the lease sweeper (at every worker's start, every minute by crontab across
 * all workers, and on each worker's own interval), and the fan-out and delivery tasks for jobs
 * that processes of the previous version queue during a rolling upgrade.
 */
@Injectable()
export class WebhookJobs implements OnModuleInit {
  private readonly logger = new Logger('WebhookJobs');

  constructor(
    private readonly registry: JobRegistry,
    private readonly fanOut: FanOutEventHandler,
    private readonly deliver: DeliverWebhookHandler,
    private readonly sweeper: SweepWebhookLeasesHandler,
    private readonly dispatcher: WebhookDispatcher,
    @Inject(WEBHOOK_OPTIONS) private readonly options: WebhookOptions,
  ) {}

  onModuleInit(): void {
    this.registry.registerService(this.dispatcher);
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
    if (result.abandoned > 0) {
      this.logger.warn(`lease sweep recovered ${result.abandoned} deliveries of stopped workers`);
    }
  }
}
