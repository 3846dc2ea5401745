import type { InvoiceLineView, Party, VatBreakdownView } from '@ledgerkey/documents';

/**
 * A sales document (an invoice or a credit note) as the e-invoicing renditions read it: the
 * stored document plus the seller details it was issued with. Every amount is integer minor
 * units of `currency`; quantities and rates are canonical decimal strings.
 */

/** The seller's postal address as the company profile keeps it (parts may be missing). */
export interface SellerAddress {
  street: string | null;
  city: string | null;
  postalCode: string | null;
  /** ISO 3166-1 alpha-2, upper case. */
  countryCode: string;
}

/** The seller a document was issued by: the company profile snapshot stored with it. */
export interface SellerDetails {
  legalName: string;
  vatId: string | null;
  registrationNumber: string | null;
  address: SellerAddress;
  iban: string | null;
  email: string | null;
  /** The seller's Peppol participant id, `scheme:identifier` (e.g. `0200:304561234`). */
  peppolId: string | null;
}

/** The buyer as the document stores it. */
export type BuyerDetails = Party;

export type SalesDocumentLine = InvoiceLineView;

export type SalesDocumentVatRow = VatBreakdownView;

interface SalesDocumentCommon {
  number: string;
  /** YYYY-MM-DD. */
  issueDate: string;
  currency: string;
  seller: SellerDetails;
  buyer: BuyerDetails;
  lines: SalesDocumentLine[];
  vatBreakdown: SalesDocumentVatRow[];
  netTotal: number;
  vatTotal: number;
  grossTotal: number;
  /** Free text printed on the document (an invoice's notes, a credit note's memo). */
  note: string | null;
}

export interface SalesInvoiceDocument extends SalesDocumentCommon {
  kind: 'invoice';
  /** YYYY-MM-DD, or null when the invoice names no due date. */
  dueDate: string | null;
  orderId: string | null;
}

export interface SalesCreditNoteDocument extends SalesDocumentCommon {
  kind: 'credit_note';
  /** The invoice the credit note corrects. */
  invoice: { number: string; issueDate: string; orderId: string | null };
  /** Why the credit note was issued, in words (`Order change`). */
  reason: string;
}

export type SalesDocument = SalesInvoiceDocument | SalesCreditNoteDocument;
