import { Injectable } from '@nestjs/common';
import { WebhookDeliveriesRepository } from '../deliveries/webhook-deliveries.repository';

@Injectable()
export class FanOutEventHandler {
  constructor(private readonly deliveries: WebhookDeliveriesRepository) {}

  /**
   * Creates a delivery for every enabled endpoint of the event's company subscribed to its
   * type, and queues each first attempt. Safe to run again for the same event.
   * @param companyId the event's company; undefined for a job that does not name it (queued by
   *   the previous version, or re-queued by the sweeper), which costs a lookup by id
   * @returns the number of deliveries created (0 for an unknown event)
   */
  async execute(companyId: string | undefined, eventId: string): Promise<number> {
    const company = companyId ?? (await this.deliveries.companyOfEvent(eventId));
    return company === null ? 0 : this.deliveries.fanOut(company, eventId);
  }
}
