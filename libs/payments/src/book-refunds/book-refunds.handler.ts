import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Propagation, Transactional } from '@ledgerkey/database';
import { InvoiceBalances } from '@ledgerkey/invoicing';
import { JournalRepository, refundPosting } from '@ledgerkey/ledger';
import { EventsRepository } from '@ledgerkey/outbox';
import type { PaymentView } from '../payments/payment.view';
import type { ProviderCharge } from '../provider-objects';
import type { RefundView } from '../refunds/refund.view';
import { RefundsRepository } from '../refunds/refunds.repository';

/**
 * Books the refunds the provider made of a payment's charge: each provider refund once (by its id,
 * `uq_payment_refunds_company_provider_refund`), with the reverse of the payment's posting (debit
 * receivables, credit provider clearing), the invoice's paid total lowered, and `payment.refunded`.
 * Whichever brings a refund first — its `charge.refunded` event, a later event of the same charge
 * (each lists every refund so far), or a reconciliation run — books it; the others find it booked.
 * A charge whose refunds add up to more than the payment books none (`refundExcess`).
 */
@Injectable()
export class BookRefundsHandler {
  constructor(
    private readonly refunds: RefundsRepository,
    private readonly balances: InvoiceBalances,
    private readonly journal: JournalRepository,
    private readonly events: EventsRepository,
  ) {}

  /**
   * In the caller's transaction. Only a succeeded payment's refunds are booked (a processing one is
   * completed first, through the payment's outcome path; a failed one has nothing to refund).
   * @returns the refunds booked now (none when all were booked before)
   * @throws Error when the charge is not the payment's
   */
  @Transactional(Propagation.Mandatory)
  async bookMissing(companyId: string, payment: PaymentView, charge: ProviderCharge): Promise<RefundView[]> {
    if (payment.status !== 'succeeded' || charge.refunds.length === 0) return [];
    if (payment.providerChargeId !== charge.id) {
      throw new Error(`charge ${charge.id} is not the charge of payment ${payment.id}`);
    }
    // Before any paid total is lowered: the callers record the event ignored / report it.
    if (refundExcess(payment, charge) !== null) return [];
    // Invoice row first (the lock order of every document that changes an invoice's totals).
    await this.balances.lock(companyId, payment.invoiceId);
    const now = new Date().toISOString();
    const booked: RefundView[] = [];
    for (const providerRefund of charge.refunds) {
      const refund: RefundView = {
        id: randomUUID(),
        object: 'refund',
        paymentId: payment.id,
        invoiceId: payment.invoiceId,
        amount: providerRefund.amount,
        currency: payment.currency,
        providerRefundId: providerRefund.id,
        providerChargeId: charge.id,
        refundedAt: new Date(providerRefund.createdAt).toISOString(),
        createdAt: now,
      };
      if (!(await this.refunds.insert(companyId, payment.provider, refund))) continue;
      await this.journal.post({
        companyId,
        currency: refund.currency,
        sourceType: 'refund',
        sourceId: refund.id,
        memo: `Refund ${refund.providerRefundId} of payment ${payment.providerReference}`,
        postedAt: new Date(refund.createdAt),
        // The refund's date at the provider (UTC) is its document date, not the booking's.
        entryDate: refund.refundedAt.slice(0, 10),
        lines: refundPosting(refund),
      });
      // refundExcess above keeps the refunds within the payment; ck_invoices_paid (paid ≥ 0) backs it.
      await this.balances.addPaid(companyId, payment.invoiceId, -refund.amount);
      booked.push(refund);
    }
    // Events last: the company's event position lock is held to COMMIT.
    for (const refund of booked) await this.events.append(companyId, 'payment.refunded', refund);
    return booked;
  }
}

/**
 * Why the refunds a charge lists cannot be booked against the payment — together more than it paid
 * (a provider error, or a charge that is not what was paid here) — or null.
 */
export function refundExcess(payment: PaymentView, charge: ProviderCharge): string | null {
  const refunded = charge.refunds.reduce((sum, refund) => sum + refund.amount, 0);
  return refunded > payment.amount
    ? `the refunds of charge ${charge.id} (${refunded} ${payment.currency}) exceed payment ${payment.id} (${payment.amount} ${payment.currency})`
    : null;
}
