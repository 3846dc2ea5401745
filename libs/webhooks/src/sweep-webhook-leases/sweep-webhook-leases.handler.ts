import { Inject, Injectable } from '@nestjs/common';
import { WebhookDeliveriesRepository, type SweepResult } from '../deliveries/webhook-deliveries.repository';
import { maxAttemptsOf } from '../deliver-webhook/retry-schedule';
import { WEBHOOK_OPTIONS, type WebhookOptions } from '../webhook-options';

@Injectable()
export class SweepWebhookLeasesHandler {
  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    @Inject(WEBHOOK_OPTIONS) private readonly options: WebhookOptions,
  ) {}

  /**
   * Makes due again what a dead worker left: deliveries with an expired lease (their attempt is
   * recorded as abandoned and counts). Any number of sweepers may run at once.
   */
  execute(): Promise<SweepResult> {
    return this.deliveries.sweep(maxAttemptsOf(this.options.retryScheduleSeconds));
  }
}
