import { type DecimalValue, minorUnitDigits, parseDecimal } from '@ledgerkey/money';
import { EInvoiceNotRepresentableError, type EInvoiceProblem } from './einvoicing.errors';
import { EU_COUNTRIES, EU_VAT_PREFIXES } from './peppol-identifiers';
import { buyerOf, clean, type PeppolParty, type Problems, sellerOf } from './peppol-parties';
import type { SalesDocument, SalesDocumentLine } from './sales-document';

export type { PeppolParty } from './peppol-parties';

export const PEPPOL_CUSTOMIZATION_ID =
  'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0';
export const PEPPOL_PROFILE_ID = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';

/** UNCL 5305 VAT categories this writer emits. */
export type VatCategoryCode = 'S' | 'Z' | 'E' | 'AE' | 'G';

export interface VatCategory {
  code: VatCategoryCode;
  /** Canonical percent ("21", "0"). Zero for every category but S. */
  percent: string;
  /** VATEX code (BT-121) where the category needs a reason. */
  exemptionReasonCode: string | null;
  /** Reason text (BT-120). */
  exemptionReason: string | null;
}

/** An amount in minor units of the document currency; the writer formats it with two decimals. */
export type MinorUnits = number;

export interface PeppolLine {
  id: string;
  quantity: string;
  lineNet: MinorUnits;
  name: string;
  category: VatCategory;
  /** The net price per `baseQuantity` (BT-146 / BT-149). */
  price: MinorUnits;
  baseQuantity: string | null;
}

export interface PeppolTaxSubtotal {
  taxable: MinorUnits;
  tax: MinorUnits;
  category: VatCategory;
}

/** Not exported: no code outside this file can make a `PeppolDocument` without `peppolDocumentOf`. */
const CHECKED: unique symbol = Symbol('PeppolDocument');

/**
 * A document that satisfies the EN 16931 and Peppol BIS 3 rules this module enforces. Only
 * `peppolDocumentOf` makes one: every invariant below is checked there, so the writer cannot be
 * handed a document that breaks them.
 */
export interface PeppolDocument {
  readonly [CHECKED]: true;
  readonly kind: 'Invoice' | 'CreditNote';
  readonly typeCode: '380' | '381';
  readonly id: string;
  readonly issueDate: string;
  readonly dueDate: string | null;
  readonly currency: string;
  readonly note: string | null;
  readonly buyerReference: string;
  readonly billingReference: { id: string; issueDate: string } | null;
  readonly seller: PeppolParty;
  readonly buyer: PeppolParty;
  readonly payment: { meansCode: '58'; paymentId: string; iban: string } | null;
  readonly paymentTerms: string;
  readonly taxSubtotals: readonly PeppolTaxSubtotal[];
  readonly taxTotal: MinorUnits;
  readonly lineExtension: MinorUnits;
  readonly taxExclusive: MinorUnits;
  readonly taxInclusive: MinorUnits;
  readonly payable: MinorUnits;
  readonly lines: readonly PeppolLine[];
}

/**
 * The VAT category of a line: rate > 0 is standard rated (S). A zero rate is a reverse charge
 * (AE, VATEX-EU-AE) when seller and buyer have VAT numbers of two different EU member states, an
 * export (G, VATEX-EU-G) when the buyer is outside the EU, and zero rated (Z) otherwise.
 * A line's explicit `vatCategory` wins.
 */
export function vatCategoryOf(line: LineWithCategory, document: SalesDocument): VatCategory {
  const percent = line.vatRate;
  const explicit = line.vatCategory;
  if (explicit) {
    return {
      code: explicit,
      percent,
      exemptionReasonCode: EXEMPTION_CODES[explicit] ?? null,
      exemptionReason: line.vatExemptionReason ?? EXEMPTION_TEXTS[explicit] ?? null,
    };
  }
  if (!isZero(percent)) return { code: 'S', percent, exemptionReasonCode: null, exemptionReason: null };
  const sellerPrefix = document.seller.vatId?.slice(0, 2) ?? null;
  const buyerPrefix = document.buyer.vatId?.slice(0, 2) ?? null;
  if (
    sellerPrefix &&
    buyerPrefix &&
    sellerPrefix !== buyerPrefix &&
    EU_VAT_PREFIXES.has(sellerPrefix) &&
    EU_VAT_PREFIXES.has(buyerPrefix)
  ) {
    return {
      code: 'AE',
      percent: '0',
      exemptionReasonCode: 'VATEX-EU-AE',
      exemptionReason: 'Reverse charge',
    };
  }
  if (!EU_COUNTRIES.has(document.buyer.countryCode)) {
    return {
      code: 'G',
      percent: '0',
      exemptionReasonCode: 'VATEX-EU-G',
      exemptionReason: 'Export outside the EU',
    };
  }
  return { code: 'Z', percent: '0', exemptionReasonCode: null, exemptionReason: null };
}

/** A line that may name its category (UNCL 5305) instead of having it derived from its rate. */
export interface LineWithCategory extends SalesDocumentLine {
  vatCategory?: VatCategoryCode;
  vatExemptionReason?: string;
}

const EXEMPTION_CODES: Partial<Record<VatCategoryCode, string>> = { AE: 'VATEX-EU-AE', G: 'VATEX-EU-G' };
const EXEMPTION_TEXTS: Partial<Record<VatCategoryCode, string>> = {
  AE: 'Reverse charge',
  G: 'Export outside the EU',
  E: 'Exempt from VAT',
};

function isZero(decimal: string): boolean {
  return /^0+(\.0+)?$/.test(decimal);
}

function decimal(text: string, maxScale: number, what: string): DecimalValue {
  const value = parseDecimal(text, maxScale);
  if (!value) throw new Error(`${what} is not a decimal: ${text}`);
  return value;
}

/**
 * The Peppol BIS Billing 3.0 document for a sales invoice or credit note, with every rule this
 * module implements checked (see docs/einvoicing.md for the list).
 * @throws EInvoiceNotRepresentableError when the seller's profile or the customer lacks what
 *   the rules require (no document is better than an invalid one)
 * @throws Error when the stored document contradicts itself (its totals do not add up) — a bug,
 *   not an input problem
 */
export function peppolDocumentOf(document: SalesDocument): PeppolDocument {
  const found: EInvoiceProblem[] = [];
  const problem: Problems = (rule, message) => found.push({ rule, message });
  if (minorUnitDigits(document.currency) > 2) {
    problem('BR-DEC-18', `${document.currency} amounts have three decimals; EN 16931 allows two`);
  }
  const seller = sellerOf(document, problem);
  const buyer = buyerOf(document, seller.address.countryCode, problem);
  const lines = linesOf(document, problem);
  if (lines.some((line) => line.category.code === 'AE') && !buyer.vatId) {
    problem('BR-AE-02', 'a reverse-charge line needs the customer VAT id');
  }
  if (found.length > 0) throw new EInvoiceNotRepresentableError(found);

  // VAT breakdown (BG-23): one row per category and rate; only S may have several rates.
  const taxSubtotals = breakdownOf(document, lines);
  const taxTotal = sum(taxSubtotals.map((row) => row.tax));
  const lineExtension = sum(lines.map((line) => line.lineNet));
  // BR-CO-10, BR-CO-13, BR-CO-14, BR-CO-15, BR-CO-16: the stored totals are the sums.
  assertEqual(lineExtension, document.netTotal, 'Σ line net amounts (BR-CO-10)');
  assertEqual(taxTotal, document.vatTotal, 'Σ VAT breakdown (BR-CO-14)');
  assertEqual(lineExtension + taxTotal, document.grossTotal, 'net + VAT (BR-CO-15)');

  const invoiceReference = document.kind === 'credit_note' ? document.invoice : null;
  const orderId = document.kind === 'invoice' ? document.orderId : document.invoice.orderId;
  const iban = clean(document.seller.iban)?.replace(/ /g, '') ?? null;
  return {
    [CHECKED]: true,
    kind: document.kind === 'invoice' ? 'Invoice' : 'CreditNote',
    typeCode: document.kind === 'invoice' ? '380' : '381',
    id: document.number,
    issueDate: document.issueDate,
    dueDate: document.kind === 'invoice' ? document.dueDate : null,
    currency: document.currency,
    note: clean(
      document.kind === 'credit_note'
        ? [`Reason: ${document.reason}.`, document.note].join(' ')
        : document.note,
    ),
    // PEPPOL-EN16931-R003: a buyer reference or an order reference; the order id, else the number.
    buyerReference: clean(orderId) ?? invoiceReference?.number ?? document.number,
    billingReference: invoiceReference
      ? { id: invoiceReference.number, issueDate: invoiceReference.issueDate }
      : null,
    seller,
    buyer,
    // BR-61: a credit transfer names the account. A credit note pays nothing to the seller.
    payment:
      document.kind === 'invoice' && iban ? { meansCode: '58', paymentId: document.number, iban } : null,
    // BR-CO-25: a positive amount due needs a due date or payment terms; terms are always given.
    paymentTerms:
      document.kind === 'invoice'
        ? document.dueDate
          ? `Payment due by ${document.dueDate}`
          : 'Payable on receipt'
        : `Credit for invoice ${document.invoice.number}`,
    taxSubtotals,
    taxTotal,
    lineExtension,
    taxExclusive: lineExtension,
    taxInclusive: lineExtension + taxTotal,
    payable: lineExtension + taxTotal,
    lines,
  };
}

/** The lines (BG-25) with their VAT categories and a price that keeps R120 exact. */
function linesOf(document: SalesDocument, problem: Problems): PeppolLine[] {
  const digits = minorUnitDigits(document.currency);
  const lines = document.lines.map((line) => {
    const category = vatCategoryOf(line, document);
    if (category.code !== 'S' && !isZero(category.percent)) {
      problem(
        `BR-${category.code}-05`,
        `line ${line.position}: category ${category.code} must have a zero rate, not ${category.percent}%`,
      );
    }
    if (category.code === 'S' && isZero(category.percent)) {
      problem('BR-S-05', `line ${line.position}: standard rated with a zero rate`);
    }
    const name = clean(line.description);
    if (!name) problem('BR-25', `line ${line.position} has no item name`);
    return {
      id: String(line.position),
      quantity: line.quantity,
      lineNet: line.netAmount,
      name: name ?? '',
      category,
      ...priceOf(line, digits),
    };
  });
  if (lines.length === 0) problem('BR-16', 'the document has no lines');
  return lines;
}

/**
 * The price of a line so that PEPPOL-EN16931-R120 holds: quantity × price / base quantity is the
 * line net within 0.02. The unit price when rounding the line kept it that close (always for
 * two-decimal currencies: at most half a cent off); otherwise the line net per its own quantity.
 */
function priceOf(
  line: SalesDocumentLine,
  digits: number,
): { price: MinorUnits; baseQuantity: string | null } {
  const quantity = decimal(line.quantity, 4, `line ${line.position} quantity`);
  const scale = 10n ** BigInt(quantity.scale);
  const offBy = BigInt(line.netAmount) * scale - quantity.units * BigInt(line.unitPrice);
  const magnitude = offBy < 0n ? -offBy : offBy;
  // |net − qty × price| ≤ 0.02 currency units, in minor units times the quantity's scale.
  if (magnitude * 100n <= 2n * 10n ** BigInt(digits) * scale)
    return { price: line.unitPrice, baseQuantity: null };
  return { price: line.netAmount, baseQuantity: line.quantity };
}

function breakdownOf(document: SalesDocument, lines: PeppolLine[]): PeppolTaxSubtotal[] {
  const groups = new Map<string, PeppolTaxSubtotal>();
  for (const line of lines) {
    const key = `${line.category.code}:${line.category.percent}`;
    const group = groups.get(key) ?? { taxable: 0, tax: 0, category: line.category };
    group.taxable += line.lineNet;
    groups.set(key, group);
  }
  for (const group of groups.values()) {
    if (group.category.code !== 'S') continue;
    const rate = decimal(group.category.percent, 2, 'VAT rate');
    const stored = document.vatBreakdown.find((row) => sameRate(row.vatRate, rate));
    if (!stored) throw new Error(`no stored VAT breakdown row for ${group.category.percent}%`);
    assertEqual(group.taxable, stored.netAmount, `taxable amount at ${group.category.percent}% (BR-S-08)`);
    // BR-S-09 / BR-CO-17: VAT = taxable × rate / 100, rounded to the minor unit.
    const exact = BigInt(group.taxable) * rate.units;
    const written = BigInt(stored.vatAmount) * 100n * 10n ** BigInt(rate.scale);
    const off = written - exact < 0n ? exact - written : written - exact;
    if (off * 2n > 100n * 10n ** BigInt(rate.scale)) {
      throw new Error(
        `stored VAT ${stored.vatAmount} at ${group.category.percent}% is not ${group.taxable} × rate (BR-S-09)`,
      );
    }
    group.tax = stored.vatAmount;
  }
  // Categories in a stable order: S by rate descending, then the zero-rate categories.
  return [...groups.values()].sort(
    (a, b) => orderOf(a) - orderOf(b) || Number(b.category.percent) - Number(a.category.percent),
  );
}

function orderOf(row: PeppolTaxSubtotal): number {
  return ['S', 'Z', 'E', 'AE', 'G'].indexOf(row.category.code);
}

function sameRate(rate: string, value: DecimalValue): boolean {
  const other = parseDecimal(rate, 2);
  return (
    other !== null && other.units * 10n ** BigInt(value.scale) === value.units * 10n ** BigInt(other.scale)
  );
}

function sum(amounts: number[]): number {
  return amounts.reduce((total, amount) => total + amount, 0);
}

function assertEqual(actual: number, stored: number, what: string): void {
  if (actual !== stored) throw new Error(`${what}: computed ${actual}, stored ${stored}`);
}
