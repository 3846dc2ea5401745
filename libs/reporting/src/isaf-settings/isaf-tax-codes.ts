import { canonicalNumeric } from '@ledgerkey/money';

/** A VAT rate (canonical decimal string, percent) and the i.SAF tax code it is declared under. */
export interface IsafTaxCode {
  vatRate: string;
  taxCode: string;
}

/**
 * The mapping a company has until it configures its own, from VMI's PVM classifier: the standard
 * rate and the two reduced rates. 0 % has no default: its code depends on the kind of supply
 * (e.g. PVM5 for domestic 0 % supplies, PVM12 for exports, PVM13 for intra-EU supplies of goods),
 * so a company with 0 % documents configures it.
 */
export const DEFAULT_ISAF_TAX_CODES: readonly IsafTaxCode[] = [
  { vatRate: '21', taxCode: 'PVM1' },
  { vatRate: '9', taxCode: 'PVM2' },
  { vatRate: '5', taxCode: 'PVM3' },
];

/** VMI's tax codes: PVM followed by 1–3 digits (4–6 characters). */
export const ISAF_TAX_CODE_PATTERN = /^PVM[0-9]{1,3}$/;

/** VAT rate (canonical) → tax code. */
export function taxCodeMap(codes: readonly IsafTaxCode[]): Map<string, string> {
  return new Map(codes.map((code) => [canonicalNumeric(code.vatRate), code.taxCode]));
}
