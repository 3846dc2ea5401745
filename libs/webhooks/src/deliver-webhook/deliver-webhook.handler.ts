import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { EventsRepository } from '@ledgerkey/outbox';
import { SealedValueUnreadableError, SecretBox } from '@ledgerkey/secrets';
import {
  WebhookDeliveriesRepository,
  type AttemptFollowUp,
  type LeasedDelivery,
} from '../deliveries/webhook-deliveries.repository';
import { openStoredSecret } from '../signing/stored-secret';
import { signWebhook } from '../signing/webhook-signature';
import { WEBHOOK_OPTIONS, type WebhookOptions } from '../webhook-options';
import { retryDelayMs } from './retry-schedule';
import { sendWebhook, type AttemptOutcome } from './webhook-request';

/** What one attempt of a delivery (or one delivery job of the previous version) did. */
export type DeliveryRun = 'none' | 'canceled' | 'delivered' | 'retry' | 'failed' | 'lease_lost';

/** What the endpoint's owner reads in the attempt list when the secret cannot be opened (details go to the log). */
const SECRET_UNREADABLE =
  'not sent: the signing secret cannot be read with this server’s secrets key; rotate the endpoint';

@Injectable()
export class DeliverWebhookHandler {
  private readonly logger = new Logger('DeliverWebhook');

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly events: EventsRepository,
    private readonly secrets: SecretBox,
    @Inject(WEBHOOK_OPTIONS) private readonly options: WebhookOptions,
  ) {}

  /**
   * A delivery job of the previous version: makes the next attempt of the delivery if it is due
   * and nobody else owns it (else leaves it alone: the dispatcher has it, or it is finished).
   * @param companyId the delivery's company; undefined for a job that names only the delivery,
   *   which costs a lookup by id
   */
  async execute(companyId: string | undefined, deliveryId: string): Promise<DeliveryRun> {
    const company = companyId ?? (await this.deliveries.companyOfDelivery(deliveryId));
    if (company === null) return 'none';
    const lease = await this.deliveries.lease(company, deliveryId, randomUUID(), this.options.leaseMs);
    if (lease.kind !== 'leased') return lease.kind;
    return this.attemptLeased(lease.delivery);
  }

  /**
   * Makes the attempt of a delivery this worker has leased: sign, POST, record the attempt and
   * either finish the delivery or make it due again per the retry schedule. A crash between
   * lease and record leaves the lease to expire; the sweeper takes over. A secret sealed under a
   * key this worker lacks is a failed attempt (nothing sent), retried per the schedule: a worker
   * with the right key may take the next one.
   */
  async attemptLeased(delivery: LeasedDelivery): Promise<DeliveryRun> {
    const outcome = await this.attempt(delivery);
    const followUp = this.followUp(delivery.attemptNumber, outcome);
    const recorded = await this.deliveries.recordAttempt(delivery, outcome, followUp);
    return recorded ? followUp.kind : 'lease_lost';
  }

  private async attempt(delivery: LeasedDelivery): Promise<AttemptOutcome> {
    let secret: string;
    try {
      secret = openStoredSecret(this.secrets, delivery.storedSecret);
    } catch (error) {
      if (!(error instanceof SealedValueUnreadableError)) throw error;
      this.logger.error(
        `delivery ${delivery.deliveryId} not sent, the signing secret of endpoint ${delivery.endpointId} ` +
          `(company ${delivery.companyId}) is unreadable: ${error.message}`,
      );
      return { statusCode: null, durationMs: 0, error: SECRET_UNREADABLE, succeeded: false };
    }
    const event = await this.events.findById(delivery.companyId, delivery.eventId);
    if (!event)
      throw new Error(
        `delivery ${delivery.deliveryId} names event ${delivery.eventId}, which does not exist`,
      );
    // Exactly the body GET /v1/events/{id} answers with.
    const body = JSON.stringify(event);
    return sendWebhook({
      url: delivery.url,
      body,
      headers: signWebhook(secret, event.id, body, new Date()),
      timeoutMs: this.options.timeoutMs,
      allowPrivateTargets: this.options.allowPrivateTargets,
    });
  }

  private followUp(attemptNumber: number, outcome: AttemptOutcome): AttemptFollowUp {
    if (outcome.succeeded) return { kind: 'delivered' };
    const delayMs = retryDelayMs(this.options.retryScheduleSeconds, attemptNumber);
    return delayMs === null ? { kind: 'failed' } : { kind: 'retry', delayMs };
  }
}
