import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { metadataOf, Transactional } from '@ledgerkey/database';
import { DocumentRecorder, DueDateBeforeIssueDateError, priceLines } from '@ledgerkey/documents';
import { purchaseInvoicePosting } from '@ledgerkey/ledger';
import type { PurchaseInvoiceView } from '../purchase-invoices/purchase-invoice.view';
import { PurchaseInvoicesRepository } from '../purchase-invoices/purchase-invoices.repository';
import { PurchaseInvoiceDuplicateError } from '../purchasing.errors';
import { supplierDocumentOf } from '../supplier-key';
import {
  type PurchasingCompany,
  type RecordPurchaseInvoiceDto,
  toRecordPurchaseInvoiceCommand,
} from './record-purchase-invoice.dto';

@Injectable()
export class RecordPurchaseInvoiceHandler {
  constructor(
    private readonly purchaseInvoices: PurchaseInvoicesRepository,
    private readonly recorder: DocumentRecorder,
  ) {}

  /**
   * Records a supplier's invoice, immutable with its lines, and posts its balanced journal
   * entry (expense and VAT receivable against payables; none for a zero-value document), all in
   * the caller's transaction (or a new one). One purchase invoice per company, supplier and
   * document number, for ever (the identity rule: see SupplierDocument).
   * @throws PurchaseInvoiceDuplicateError when the company already recorded this supplier document
   * @throws DueDateBeforeIssueDateError when dueDate precedes issueDate
   * @throws AmountOutOfRangeError when a total would exceed the supported range
   */
  @Transactional()
  async execute(
    company: PurchasingCompany,
    dto: RecordPurchaseInvoiceDto,
    now = new Date(),
  ): Promise<PurchaseInvoiceView> {
    const command = toRecordPurchaseInvoiceCommand(dto, company);
    const amounts = priceLines(command.lines);
    DueDateBeforeIssueDateError.assertNotBefore(command.issueDate, command.dueDate);
    const document = supplierDocumentOf(command.supplier, command.documentNumber);
    // From here to COMMIT this transaction holds the (company, document number) lock: a
    // concurrent upload of the same number waits for it and then finds this document.
    const existingId = await this.purchaseInvoices.claimDocument(company.id, document);
    if (existingId !== null) throw new PurchaseInvoiceDuplicateError(command.documentNumber, existingId);

    const invoice: PurchaseInvoiceView = {
      id: randomUUID(),
      object: 'purchase_invoice',
      documentNumber: command.documentNumber,
      supplier: command.supplier,
      currency: command.currency,
      issueDate: command.issueDate,
      dueDate: command.dueDate,
      ...amounts,
      notes: command.notes,
      metadata: metadataOf(command.metadata),
      createdAt: now.toISOString(),
    };
    const insert = async () => {
      await this.purchaseInvoices.insert(company.id, document, invoice);
      return invoice;
    };
    return this.recorder.record(company.id, insert, () => ({
      memo: `Purchase invoice ${invoice.documentNumber} from ${invoice.supplier.name}`,
      entryDate: invoice.issueDate,
      lines: purchaseInvoicePosting(invoice),
    }));
  }
}
