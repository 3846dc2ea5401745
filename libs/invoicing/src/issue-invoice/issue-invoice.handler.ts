import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { metadataOf, Transactional } from '@ledgerkey/database';
import {
  DocumentRecorder,
  DueDateBeforeIssueDateError,
  priceLines,
  todayUtc,
  withMembersAfter,
} from '@ledgerkey/documents';
import { salesInvoicePosting } from '@ledgerkey/ledger';
import { OrderAlreadyInvoicedError } from '../invoicing.errors';
import type { InvoiceView } from '../invoices/invoice.view';
import { invoiceStatusOf } from '../invoices/invoice-status';
import { type InvoiceDraft, InvoicesRepository } from '../invoices/invoices.repository';
import { type CompanyDefaults, type IssueInvoiceDto, toIssueInvoiceCommand } from './issue-invoice.dto';

@Injectable()
export class IssueInvoiceHandler {
  constructor(
    private readonly invoices: InvoicesRepository,
    private readonly recorder: DocumentRecorder,
  ) {}

  /**
   * Issues an invoice: gapless number, immutable document and lines, and its balanced
   * journal entry, all in the caller's transaction (or a new one).
   * @throws OrderAlreadyInvoicedError when the order already has an invoice
   * @throws DueDateBeforeIssueDateError when dueDate precedes the (defaulted) issue date
   * @throws AmountOutOfRangeError when a total would exceed the supported range
   */
  @Transactional()
  async execute(company: CompanyDefaults, dto: IssueInvoiceDto, now = new Date()): Promise<InvoiceView> {
    const command = toIssueInvoiceCommand(dto, company);
    const amounts = priceLines(command.lines);
    const issueDate = command.issueDate ?? todayUtc(now);
    DueDateBeforeIssueDateError.assertNotBefore(issueDate, command.dueDate);
    // Cheap early answer for the common case; the unique index decides races below.
    if (command.orderId !== null) await this.assertOrderNotInvoiced(company.id, command.orderId);

    // Everything above is computed before the number is taken: from the INSERT that takes it to
    // COMMIT this transaction holds the (company, invoice, series) counter row lock.
    const draft: InvoiceDraft = {
      id: randomUUID(),
      object: 'invoice',
      series: command.series,
      status: 'issued',
      orderId: command.orderId,
      currency: command.currency,
      issueDate,
      dueDate: command.dueDate,
      customer: command.customer,
      ...amounts,
      creditedTotal: 0,
      paidTotal: 0,
      ...invoiceStatusOf({ grossTotal: amounts.grossTotal, creditedTotal: 0, paidTotal: 0 }),
      notes: command.notes,
      metadata: metadataOf(command.metadata),
      createdAt: now.toISOString(),
    };
    return this.recorder.record(
      company.id,
      () => this.insert(company.id, draft),
      (invoice) => ({
        memo: `Invoice ${invoice.number}`,
        entryDate: invoice.issueDate,
        lines: salesInvoicePosting(invoice),
      }),
    );
  }

  /**
   * Numbers and stores the invoice: its number and seller come from the statement that stores it.
   * @throws OrderAlreadyInvoicedError when a concurrent invoice took the order first
   */
  private async insert(companyId: string, draft: InvoiceDraft): Promise<InvoiceView> {
    const issued = await this.invoices.insert(companyId, draft);
    // The view's order: number after `object`, sequence after `series`, seller after `dueDate`.
    if (issued !== null)
      return withMembersAfter(draft, issued, { number: 'object', sequence: 'series', seller: 'dueDate' });
    await this.assertOrderNotInvoiced(companyId, draft.orderId as string);
    throw new Error('invoice insert reported a conflict but no invoice holds the order');
  }

  private async assertOrderNotInvoiced(companyId: string, orderId: string): Promise<void> {
    const existingInvoiceId = await this.invoices.findIdByOrder(companyId, orderId);
    if (existingInvoiceId !== null) throw new OrderAlreadyInvoicedError(orderId, existingInvoiceId);
  }
}
