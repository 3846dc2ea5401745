import { Injectable } from '@nestjs/common';
import { Propagation, Transactional } from '@ledgerkey/database';
import { InvoicesRepository } from './invoices.repository';

/** What a payment needs to know of the invoice it pays, read under the invoice's row lock. */
export interface PayableInvoice {
  id: string;
  number: string;
  currency: string;
  grossTotal: number;
  creditedTotal: number;
  paidTotal: number;
}

/**
 * An invoice's running paid total, for payments (libs/payments), which invoicing does not own but
 * whose effect on an invoice it does: the same row lock and the same running-total write as
 * credit notes and settlements, so all of them queue on the invoice row.
 */
@Injectable()
export class InvoiceBalances {
  constructor(private readonly invoices: InvoicesRepository) {}

  /**
   * Locks the invoice for the rest of the transaction (lock order: invoice rows first, as every
   * document that changes an invoice's totals) and reads its totals.
   * @returns null when the invoice is unknown in this company (also another company's id)
   */
  @Transactional(Propagation.Mandatory)
  async lock(companyId: string, invoiceId: string): Promise<PayableInvoice | null> {
    const [invoice] = await this.invoices.lockForUpdate(companyId, [invoiceId]);
    if (invoice === undefined) return null;
    const { id, number, currency, grossTotal, creditedTotal, paidTotal } = invoice;
    return { id, number, currency, grossTotal, creditedTotal, paidTotal };
  }

  /**
   * Raises the invoice's paid total by a succeeded payment's amount, under the lock taken by
   * `lock` in this transaction; `ck_invoices_paid` (paid ≤ gross) backs the caller's check.
   */
  @Transactional(Propagation.Mandatory)
  async addPaid(companyId: string, invoiceId: string, amount: number): Promise<void> {
    await this.invoices.addToRunningTotals(companyId, invoiceId, { paid: amount });
  }
}
