/**
 * What an i.SAF file holds (types and constants); `isaf-xml.ts` writes it. Apart, so that reading
 * these does not load the XML builder.
 */

export const ISAF_NAMESPACE = 'http://www.vmi.lt/cms/imas/isaf';

/** i.SAF declares euro amounts, written with two decimals. */
export const ISAF_CURRENCY = 'EUR';

/** F: full (sales and purchases), S: sales only, P: purchases only. */
export type IsafDataType = 'F' | 'S' | 'P';
export const ISAF_DATA_TYPES: readonly IsafDataType[] = ['F', 'S', 'P'];

/** The other party of a document, as i.SAF names it. */
export interface IsafParty {
  vatId: string | null;
  countryCode: string;
  name: string;
}

/** One VAT rate of a document: amounts in euro cents, negative on a credit note. */
export interface IsafDocumentTotal {
  vatRate: string;
  taxCode: string;
  taxableValue: number;
  vatAmount: number;
}

export interface IsafSalesDocument {
  number: string;
  party: IsafParty;
  date: string;
  /** SF: invoice; KS: credit note, with the invoice it corrects. */
  type: 'SF' | 'KS';
  reference: { number: string; date: string } | null;
  totals: IsafDocumentTotal[];
}

export interface IsafPurchaseDocument {
  number: string;
  party: IsafParty;
  date: string;
  /** When the invoice was entered in the books. */
  registrationDate: string;
  totals: IsafDocumentTotal[];
}

export interface IsafFileInput {
  dataType: IsafDataType;
  createdAt: Date;
  software: { companyName: string; name: string; version: string };
  /** The company's registration number (VMI's taxpayer code): 1–11 digits. */
  registrationNumber: string;
  period: { from: string; to: string };
  sales: IsafSalesDocument[];
  purchases: IsafPurchaseDocument[];
}
