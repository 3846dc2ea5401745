import { Inject, Injectable, Logger } from '@nestjs/common';
import { TransactionHost, type PgTransactionalAdapter } from '@ledgerkey/database';
import { BookRefundsHandler, refundExcess } from '../book-refunds/book-refunds.handler';
import { CompletePaymentHandler } from '../complete-payment/complete-payment.handler';
import { ImportPayoutHandler } from '../import-payout/import-payout.handler';
import type { PaymentProvider } from '../payment-provider';
import { PAYMENTS_OPTIONS, PAYMENT_PROVIDER, type PaymentsOptions } from '../payments-options';
import { NO_OP_PAYMENTS_OBSERVER, type PaymentsObserver } from '../payments.observer';
import type { PaymentView } from '../payments/payment.view';
import { PaymentsRepository } from '../payments/payments.repository';
import type { ProviderCharge, ProviderEvent, ProviderPayout } from '../provider-objects';
import { parseProviderEvent } from './provider-event';
import {
  ProviderEventInvalidError,
  ProviderEventTypeUnknownError,
  ProviderSignatureInvalidError,
  ProviderUnknownError,
  ProviderWebhookSecretMissingError,
} from './provider-events.errors';
import { ProviderEventsRepository } from './provider-events.repository';
import { verifyProviderSignature } from './provider-signature';

/** How one delivery (or one retry of a parked event) ended. */
export type ProviderEventResult = 'applied' | 'duplicate' | 'parked' | 'ignored';

/** The answer to the provider: `200` with this body. */
export interface ProviderEventReceipt {
  /** True when the event was recorded before: nothing was applied now. */
  duplicate: boolean;
  result: ProviderEventResult;
  /** Why it was parked or ignored. */
  reason?: string;
}

/** Parked events one worker pass retries at most. */
const PARKED_BATCH = 50;
/** How long a delivery waits for an attempt that holds its payment's key before parking it. */
const HELD_WAIT_MS = 1000;
const HELD_POLL_MS = 100;
/** The longest wait between two tries of a parked event. */
const MAX_PARK_BACKOFF_MS = 3_600_000;

/** What refuses a delivery before anything is recorded. */
const REFUSALS = [
  ProviderUnknownError,
  ProviderWebhookSecretMissingError,
  ProviderSignatureInvalidError,
  ProviderEventInvalidError,
  ProviderEventTypeUnknownError,
];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The provider's webhooks, each applied once however often and in whatever order it arrives.
 * An event is recorded by (company, provider, event id) — the first statement of the transaction
 * that applies it — so a repeat finds it and applies nothing. Per type (docs/idempotency.md,
 * "Inbound: provider events"):
 * - `charge.succeeded` / `charge.failed`: a processing payment is completed through the payment's
 *   own outcome path (`CompletePaymentHandler`: the recovery's resume, with the charge in hand),
 *   the event recorded in the transaction that settles it. When an attempt holds the payment's key
 *   (the request that charged is still waiting for its answer) the event is parked and retried.
 *   A finished payment is left as it is: the event is recorded (applied when it agrees, ignored
 *   with the disagreement as reason, which reconciliation reports).
 * - `charge.refunded`: the charge says it succeeded, so a processing payment is completed first
 *   (as above); then every refund the charge lists that is not booked yet is booked — unless the
 *   refunds add up to more than the payment: then none is, and the event is recorded `ignored`.
 * - `payout.paid`: when every charge it pays out belongs to a succeeded payment here, it becomes a
 *   settlement through `RecordSettlementHandler.importPayout` (payoutId the business key: a payout
 *   already settled, pushed or imported, is left as it is); otherwise it is parked until the
 *   payments have their outcome (their events, or the recovery, bring it). A payout that cannot be
 *   booked as reported (another currency than its invoices, a fee above its total), or that a
 *   pushed settlement books although it pays out payments recorded here (counted twice), is
 *   recorded `ignored` with the reason; reconciliation reports it `needs_review`.
 */
@Injectable()
export class ReceiveProviderEventHandler {
  private readonly logger = new Logger('ProviderEvents');
  private readonly observer: PaymentsObserver;

  constructor(
    private readonly txHost: TransactionHost<PgTransactionalAdapter>,
    private readonly events: ProviderEventsRepository,
    private readonly payments: PaymentsRepository,
    private readonly completePayment: CompletePaymentHandler,
    private readonly bookRefunds: BookRefundsHandler,
    private readonly importPayout: ImportPayoutHandler,
    @Inject(PAYMENT_PROVIDER) private readonly provider: PaymentProvider | null,
    @Inject(PAYMENTS_OPTIONS) private readonly options: PaymentsOptions,
  ) {
    this.observer = options.observer ?? NO_OP_PAYMENTS_OBSERVER;
  }

  /**
   * One delivery: verified, parsed, recorded and applied (or found recorded).
   * @throws ProviderUnknownError when `provider` is not the configured provider
   * @throws ProviderWebhookSecretMissingError when no webhook secret is configured
   * @throws ProviderSignatureInvalidError, ProviderEventInvalidError, ProviderEventTypeUnknownError:
   *   refused, nothing recorded
   */
  async receive(
    provider: string,
    rawBody: Buffer,
    headers: Record<string, string | string[] | undefined>,
  ): Promise<ProviderEventReceipt> {
    try {
      if (this.provider === null || provider !== this.provider.name) throw new ProviderUnknownError(provider);
      const secret = this.options.config.provider.webhookSecret;
      if (secret === undefined) throw new ProviderWebhookSecretMissingError();
      verifyProviderSignature(secret, rawBody, headers);
      const event = parseProviderEvent(JSON.parse(rawBody.toString('utf8')) as unknown);
      const receipt = await this.accept(provider, event);
      this.observer.providerEvent(receipt.result);
      return receipt;
    } catch (error) {
      if (REFUSALS.some((refusal) => error instanceof refusal)) this.observer.providerEvent('rejected');
      throw error;
    }
  }

  /** One pass over the parked events that are due (the worker's task). */
  async retryParked(): Promise<Record<ProviderEventResult, number>> {
    const report: Record<ProviderEventResult, number> = { applied: 0, duplicate: 0, parked: 0, ignored: 0 };
    for (const parked of await this.events.dueParked(PARKED_BATCH)) {
      try {
        const receipt = await this.apply(parked.companyId, parked.provider, parked.event);
        report[receipt.result] += 1;
        if (receipt.result !== 'parked') this.observer.providerEvent(receipt.result);
      } catch (error) {
        this.logger.error(
          `parked event ${parked.event.id} (company ${parked.companyId}) failed again; it is tried later`,
          error instanceof Error ? error.stack : error,
        );
      }
    }
    return report;
  }

  private async accept(provider: string, event: ProviderEvent): Promise<ProviderEventReceipt> {
    const companyId = event.type === 'payout.paid' ? event.data.companyId : event.data.metadata.companyId;
    if (
      typeof companyId !== 'string' ||
      !UUID.test(companyId) ||
      !(await this.events.companyExists(companyId))
    ) {
      // Nowhere to record it: not ours (e.g. a charge made outside ledgerkey). Acknowledged so the
      // provider stops sending it; reconciliation is what finds such charges.
      return { duplicate: false, result: 'ignored', reason: 'the event names no company of this server' };
    }
    if ((await this.events.statusOf(companyId, provider, event.id)) !== null) {
      return { duplicate: true, result: 'duplicate' };
    }
    return this.apply(companyId.toLowerCase(), provider, event);
  }

  /** Applies a new or parked event once; the receipt says what happened. */
  private apply(companyId: string, provider: string, event: ProviderEvent): Promise<ProviderEventReceipt> {
    return event.type === 'payout.paid'
      ? this.applyPayout(companyId, provider, event, event.data)
      : this.applyCharge(companyId, provider, event, event.data);
  }

  private async applyCharge(
    companyId: string,
    provider: string,
    event: ProviderEvent,
    charge: ProviderCharge,
  ): Promise<ProviderEventReceipt> {
    const found = await this.payments.findByReference(companyId, provider, charge.reference);
    if (found === null) {
      return this.recordOnly(
        companyId,
        provider,
        event,
        'ignored',
        'no payment here has the charge reference',
      );
    }
    if (found.payment.status === 'processing') {
      let recorded = false;
      let excess: string | null = null;
      const result = await this.completePayment.withCharge(companyId, found, charge, async (settled) => {
        excess = event.type === 'charge.refunded' ? refundExcess(settled, charge) : null;
        recorded = await this.events.record(
          companyId,
          provider,
          event,
          excess === null ? 'applied' : 'ignored',
          excess,
        );
        if (recorded && excess === null && event.type === 'charge.refunded') {
          await this.bookRefunds.bookMissing(companyId, settled, charge);
        }
      });
      switch (result) {
        case 'completed':
          if (!recorded) return { duplicate: true, result: 'duplicate' };
          return excess === null
            ? { duplicate: false, result: 'applied' }
            : { duplicate: false, result: 'ignored', reason: excess };
        case 'held':
          // Usually the request that charged, a moment before it settles with the provider's
          // answer (the provider sends the event as it answers): wait for that moment first.
          if (!(await this.settlesShortly(companyId, found.payment.id))) {
            return this.park(companyId, provider, event, "an attempt holds the payment's key");
          }
          break;
        case 'mismatch':
          return this.recordOnly(
            companyId,
            provider,
            event,
            'ignored',
            `the charge (${charge.amount} ${charge.currency}) does not match payment ${found.payment.id}`,
          );
        case 'finished':
          break;
      }
    }
    return this.txHost.withTransaction(async () => {
      const payment = (await this.payments.findById(companyId, found.payment.id)) as PaymentView;
      const disagreement =
        chargeDisagreement(event, payment, charge) ??
        (event.type === 'charge.refunded' ? refundExcess(payment, charge) : null);
      if (
        !(await this.events.record(
          companyId,
          provider,
          event,
          disagreement ? 'ignored' : 'applied',
          disagreement,
        ))
      ) {
        return { duplicate: true, result: 'duplicate' as const };
      }
      if (disagreement !== null) {
        this.logger.warn(`event ${event.id}: ${disagreement}; recorded, not applied`);
        return { duplicate: false, result: 'ignored' as const, reason: disagreement };
      }
      if (event.type === 'charge.refunded') await this.bookRefunds.bookMissing(companyId, payment, charge);
      return { duplicate: false, result: 'applied' as const };
    });
  }

  private async applyPayout(
    companyId: string,
    provider: string,
    event: ProviderEvent,
    payout: ProviderPayout,
  ): Promise<ProviderEventReceipt> {
    const imported = await this.importPayout.import(companyId, provider, payout, (reason) =>
      this.events.record(companyId, provider, event, reason === null ? 'applied' : 'ignored', reason),
    );
    switch (imported.kind) {
      case 'imported':
      case 'settled_before':
        return { duplicate: false, result: 'applied' };
      case 'rejected':
      case 'pushed_twice':
        // Recorded as ignored with the reason (no redelivery loop); reconciliation reports it.
        return { duplicate: false, result: 'ignored', reason: imported.reason };
      case 'refused':
        return { duplicate: true, result: 'duplicate' };
      case 'waiting': {
        const { chargeIds } = imported;
        const named = chargeIds.slice(0, 5).join(', ') + (chargeIds.length > 5 ? ', …' : '');
        return this.park(
          companyId,
          provider,
          event,
          `charges without a succeeded payment here yet: ${named}`,
        );
      }
    }
  }

  /** Whether the payment leaves `processing` within HELD_WAIT_MS. */
  private async settlesShortly(companyId: string, paymentId: string): Promise<boolean> {
    for (let waited = 0; waited < HELD_WAIT_MS; waited += HELD_POLL_MS) {
      await new Promise((resolve) => setTimeout(resolve, HELD_POLL_MS));
      if ((await this.payments.findById(companyId, paymentId))?.status !== 'processing') return true;
    }
    return false;
  }

  private recordOnly(
    companyId: string,
    provider: string,
    event: ProviderEvent,
    status: 'applied' | 'ignored',
    reason: string,
  ): Promise<ProviderEventReceipt> {
    return this.txHost.withTransaction(async () =>
      (await this.events.record(companyId, provider, event, status, reason))
        ? { duplicate: false, result: status, reason }
        : { duplicate: true, result: 'duplicate' as const },
    );
  }

  private park(
    companyId: string,
    provider: string,
    event: ProviderEvent,
    reason: string,
  ): Promise<ProviderEventReceipt> {
    return this.txHost.withTransaction(async () => {
      const attempts = await this.events.attemptsOf(companyId, provider, event.id);
      const delay = Math.min(MAX_PARK_BACKOFF_MS, this.options.config.recovery.intervalMs * 2 ** attempts);
      const parked = await this.events.park(companyId, provider, event, reason, new Date(Date.now() + delay));
      return parked
        ? { duplicate: false, result: 'parked' as const, reason }
        : { duplicate: true, result: 'duplicate' as const };
    });
  }
}

/** Why a charge event disagrees with its payment's final outcome, or null when it agrees. */
function chargeDisagreement(
  event: ProviderEvent,
  payment: PaymentView,
  charge: ProviderCharge,
): string | null {
  const expected = event.type === 'charge.failed' ? 'failed' : 'succeeded';
  if (payment.status !== expected) {
    return `${event.type} for payment ${payment.id}, which ${payment.status === 'failed' ? 'failed' : 'succeeded'} here`;
  }
  if (payment.providerChargeId !== null && payment.providerChargeId !== charge.id) {
    return `charge ${charge.id} is not payment ${payment.id}'s charge (${payment.providerChargeId})`;
  }
  return null;
}
