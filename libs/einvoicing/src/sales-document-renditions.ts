import { Injectable } from '@nestjs/common';
import {
  CreditNoteQueries,
  type CreditNoteView,
  InvoiceQueries,
  type InvoiceView,
} from '@ledgerkey/invoicing';
import { type PeppolDocument, peppolDocumentOf } from './peppol-document';
import type { SalesCreditNoteDocument, SalesDocument, SalesInvoiceDocument } from './sales-document';

/** A file rendition of a document, ready to send. */
export interface Rendition {
  fileName: string;
  contentType: 'application/xml' | 'application/pdf';
  content: Buffer;
}

/**
 * The Peppol UBL and PDF renditions of a company's sales invoices and credit notes, read from
 * the stored (immutable) documents with the seller snapshot they were issued with: the same
 * document always renders to the same bytes. The writers (and their XML and PDF libraries, a
 * fifth of the API's modules) load with the first rendition, not with every process that starts.
 */
@Injectable()
export class SalesDocumentRenditions {
  constructor(
    private readonly invoices: InvoiceQueries,
    private readonly creditNotes: CreditNoteQueries,
  ) {}

  /**
   * @throws InvoiceNotFoundError when the id is unknown in this company
   * @throws EInvoiceNotRepresentableError when the seller profile or customer lacks what Peppol requires
   */
  async invoiceUbl(companyId: string, invoiceId: string): Promise<Rendition> {
    const invoice = invoiceDocumentOf(await this.invoices.get(companyId, invoiceId));
    return xml(invoice.number, await ublOf(peppolDocumentOf(invoice)));
  }

  /** @throws InvoiceNotFoundError when the id is unknown in this company */
  async invoicePdf(companyId: string, invoiceId: string): Promise<Rendition> {
    const invoice = invoiceDocumentOf(await this.invoices.get(companyId, invoiceId));
    return pdf(invoice.number, await pdfOf(invoice));
  }

  /**
   * @throws CreditNoteNotFoundError when the id is unknown in this company
   * @throws EInvoiceNotRepresentableError when the seller profile or customer lacks what Peppol requires
   */
  async creditNoteUbl(companyId: string, creditNoteId: string): Promise<Rendition> {
    const note = await this.creditNoteDocument(companyId, creditNoteId);
    return xml(note.number, await ublOf(peppolDocumentOf(note)));
  }

  /** @throws CreditNoteNotFoundError when the id is unknown in this company */
  async creditNotePdf(companyId: string, creditNoteId: string): Promise<Rendition> {
    const note = await this.creditNoteDocument(companyId, creditNoteId);
    return pdf(note.number, await pdfOf(note));
  }

  private async creditNoteDocument(
    companyId: string,
    creditNoteId: string,
  ): Promise<SalesCreditNoteDocument> {
    const note = await this.creditNotes.get(companyId, creditNoteId);
    // The credit note keeps its own seller snapshot; the customer is the credited invoice's.
    return creditNoteDocumentOf(note, await this.invoices.get(companyId, note.invoiceId));
  }
}

/** Peppol UBL, its writer loaded on first use. */
async function ublOf(document: PeppolDocument): Promise<string> {
  return (await import('./ubl-writer.js')).writeUbl(document);
}

/** The PDF, its writer loaded on first use. */
async function pdfOf(document: SalesDocument): Promise<Buffer> {
  return (await import('./pdf-writer.js')).writePdf(document);
}

export function invoiceDocumentOf(invoice: InvoiceView): SalesInvoiceDocument {
  return {
    kind: 'invoice',
    number: invoice.number,
    issueDate: invoice.issueDate,
    dueDate: invoice.dueDate,
    orderId: invoice.orderId,
    currency: invoice.currency,
    seller: invoice.seller,
    buyer: invoice.customer,
    lines: invoice.lines,
    vatBreakdown: invoice.vatBreakdown,
    netTotal: invoice.netTotal,
    vatTotal: invoice.vatTotal,
    grossTotal: invoice.grossTotal,
    note: invoice.notes,
  };
}

export function creditNoteDocumentOf(note: CreditNoteView, invoice: InvoiceView): SalesCreditNoteDocument {
  return {
    kind: 'credit_note',
    number: note.number,
    // A credit note is dated the day it was issued (UTC).
    issueDate: note.createdAt.slice(0, 10),
    invoice: { number: invoice.number, issueDate: invoice.issueDate, orderId: invoice.orderId },
    reason: REASONS[note.reason],
    currency: note.currency,
    seller: note.seller,
    buyer: invoice.customer,
    lines: note.lines,
    vatBreakdown: note.vatBreakdown,
    netTotal: note.netTotal,
    vatTotal: note.vatTotal,
    grossTotal: note.grossTotal,
    note: note.memo,
  };
}

const REASONS: Record<CreditNoteView['reason'], string> = {
  duplicate: 'Duplicate',
  fraudulent: 'Fraudulent',
  order_change: 'Order change',
  product_unsatisfactory: 'Product unsatisfactory',
  other: 'Other',
};

/** Document numbers are `[A-Z0-9]{1,10}-[0-9]+`: safe in a file name as they are. */
function xml(number: string, text: string): Rendition {
  return { fileName: `${number}.xml`, contentType: 'application/xml', content: Buffer.from(text, 'utf8') };
}

function pdf(number: string, content: Buffer): Rendition {
  return { fileName: `${number}.pdf`, contentType: 'application/pdf', content };
}
