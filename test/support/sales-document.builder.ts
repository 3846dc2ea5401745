import { computeDocumentTotals } from '@ledgerkey/money';
import type {
  BuyerDetails,
  SalesCreditNoteDocument,
  SalesDocumentLine,
  SalesInvoiceDocument,
  SellerDetails,
} from '@ledgerkey/einvoicing';

/** Test data for the renditions: a Lithuanian seller invoicing a Danish customer. */
export function aSeller(overrides: Partial<SellerDetails> = {}): SellerDetails {
  return {
    legalName: 'UAB Šviesų ąžuolas',
    vatId: 'LT100001234567',
    registrationNumber: '304561234',
    address: { street: 'Gedimino pr. 9', city: 'Vilnius', postalCode: 'LT-01103', countryCode: 'LT' },
    iban: 'LT12 1000 0111 0100 1000',
    email: 'saskaitos@azuolas.lt',
    peppolId: null,
    ...overrides,
  };
}

export function aBuyer(overrides: Partial<BuyerDetails> = {}): BuyerDetails {
  return {
    name: 'Ærø Øko Fødevarer ApS',
    vatId: 'DK12345678',
    countryCode: 'DK',
    address: 'Søndergade 5, 5970 Ærøskøbing',
    email: 'faktura@aeroe.dk',
    ...overrides,
  };
}

export function aLine(overrides: Partial<SalesDocumentLine> = {}): SalesDocumentLine {
  return {
    position: 1,
    description: 'Konsultacija: ąčęėįšųūž',
    quantity: '2',
    unitPrice: 5000,
    vatRate: '21',
    netAmount: 10000,
    ...overrides,
  };
}

/**
 * An invoice with lines at 21 % and 9 %: totals and breakdown computed the way ledgerkey stores
 * them (line net rounded per line, VAT per rate).
 */
export function anInvoice(overrides: Partial<SalesInvoiceDocument> = {}): SalesInvoiceDocument {
  const lines = overrides.lines ?? [
    aLine(),
    aLine({
      position: 2,
      description: 'Knyga „Žalgiris“',
      quantity: '3',
      unitPrice: 1999,
      vatRate: '9',
      netAmount: 5997,
    }),
  ];
  return {
    kind: 'invoice',
    number: 'INV-000042',
    issueDate: '2026-11-30',
    dueDate: '2026-12-30',
    orderId: 'order-1041',
    currency: 'EUR',
    seller: aSeller(),
    buyer: aBuyer(),
    note: 'Ačiū! Tak for handlen, blåbærgrød.',
    ...totalsOf(lines),
    ...overrides,
  };
}

export function aCreditNote(overrides: Partial<SalesCreditNoteDocument> = {}): SalesCreditNoteDocument {
  const lines = overrides.lines ?? [aLine({ quantity: '1', netAmount: 5000 })];
  return {
    kind: 'credit_note',
    number: 'CN-000007',
    issueDate: '2026-12-02',
    invoice: { number: 'INV-000042', issueDate: '2026-11-30', orderId: 'order-1041' },
    reason: 'Order change',
    currency: 'EUR',
    seller: aSeller(),
    buyer: aBuyer(),
    note: 'Grąžinta viena konsultacija',
    ...totalsOf(lines),
    ...overrides,
  };
}

/** Totals and breakdown as ledgerkey computes and stores them (libs/money). */
export function totalsOf(lines: SalesDocumentLine[]) {
  const totals = computeDocumentTotals(lines);
  return {
    lines: lines.map((line, index) => ({ ...line, netAmount: totals.lineNetAmounts[index] })),
    vatBreakdown: totals.vatBreakdown,
    netTotal: totals.netTotal,
    vatTotal: totals.vatTotal,
    grossTotal: totals.grossTotal,
  };
}
