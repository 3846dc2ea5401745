import { Injectable } from '@nestjs/common';
import { WebhookDeliveriesRepository } from '../deliveries/webhook-deliveries.repository';

@Injectable()
export class FanOutEventHandler {
  constructor(private readonly deliveries: WebhookDeliveriesRepository) {}

  /**
   * Creates a delivery for every enabled endpoint of the event's company subscribed to its
   * type, and queues each first attempt. Safe to run again for the same event.
   * @returns the number of deliveries created
   */
  execute(eventId: string): Promise<number> {
    return this.deliveries.fanOut(eventId);
  }
}
