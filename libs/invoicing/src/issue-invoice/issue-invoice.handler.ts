import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { metadataOf, Transactional } from '@ledgerkey/database';
import { DocumentRecorder, DueDateBeforeIssueDateError, priceLines, todayUtc } from '@ledgerkey/documents';
import { salesInvoicePosting } from '@ledgerkey/ledger';
import { CompanyProfileQueries } from '@ledgerkey/tenancy';
import { OrderAlreadyInvoicedError } from '../invoicing.errors';
import type { InvoiceView } from '../invoices/invoice.view';
import { invoiceStatusOf } from '../invoices/invoice-status';
import { InvoicesRepository } from '../invoices/invoices.repository';
import { formatDocumentNumber } from '../numbering/document-number';
import { DocumentSequenceRepository } from '../numbering/document-sequence.repository';
import { type CompanyDefaults, type IssueInvoiceDto, toIssueInvoiceCommand } from './issue-invoice.dto';

@Injectable()
export class IssueInvoiceHandler {
  constructor(
    private readonly invoices: InvoicesRepository,
    private readonly sequences: DocumentSequenceRepository,
    private readonly recorder: DocumentRecorder,
    private readonly profiles: CompanyProfileQueries,
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

    // Everything above is computed before the number is taken: from here to COMMIT this
    // transaction holds the (company, invoice, series) counter row lock.
    // The seller as the profile stands now, in this transaction: the invoice keeps it for ever.
    const seller = await this.profiles.sellerOf(company.id);
    const sequence = await this.sequences.next(company.id, 'invoice', command.series);
    const invoice: InvoiceView = {
      id: randomUUID(),
      object: 'invoice',
      number: formatDocumentNumber(command.series, sequence),
      series: command.series,
      sequence,
      status: 'issued',
      orderId: command.orderId,
      currency: command.currency,
      issueDate,
      dueDate: command.dueDate,
      seller,
      customer: command.customer,
      ...amounts,
      creditedTotal: 0,
      paidTotal: 0,
      ...invoiceStatusOf({ grossTotal: amounts.grossTotal, creditedTotal: 0, paidTotal: 0 }),
      notes: command.notes,
      metadata: metadataOf(command.metadata),
      createdAt: now.toISOString(),
    };
    return this.recorder.record(company.id, invoice, () => this.insert(company.id, invoice), {
      memo: `Invoice ${invoice.number}`,
      entryDate: invoice.issueDate,
      lines: salesInvoicePosting(invoice),
    });
  }

  /** @throws OrderAlreadyInvoicedError when a concurrent invoice took the order first */
  private async insert(companyId: string, invoice: InvoiceView): Promise<void> {
    if (await this.invoices.insert(companyId, invoice)) return;
    await this.assertOrderNotInvoiced(companyId, invoice.orderId as string);
    throw new Error('invoice insert reported a conflict but no invoice holds the order');
  }

  private async assertOrderNotInvoiced(companyId: string, orderId: string): Promise<void> {
    const existingInvoiceId = await this.invoices.findIdByOrder(companyId, orderId);
    if (existingInvoiceId !== null) throw new OrderAlreadyInvoicedError(orderId, existingInvoiceId);
  }
}
