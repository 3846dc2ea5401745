/**
 * Who issued a supplier document, and which of their documents it is, in the canonical form
 * the business key `(company, supplier key, document number)` compares.
 */

// Unicode punctuation (\p{P}) and white space (\s with the u flag includes NBSP and friends).
const PUNCTUATION = /\p{P}+/gu;
const WHITE_SPACE = /\s+/gu;

/**
 * A supplier name as identity: NFKC, lower case, punctuation removed, white space collapsed
 * and trimmed. "UAB  Tiekėjas," and "uab tiekėjas" are one supplier.
 * @returns the normalized name; empty when the name is only punctuation and white space
 */
export function normalizeSupplierName(name: string): string {
  return (
    name
      .normalize('NFKC')
      .toLowerCase()
      // Lower-casing can leave a string that is no longer NFKC ("İ" → "i̇"): normalize again.
      .normalize('NFKC')
      .replace(PUNCTUATION, '')
      .replace(WHITE_SPACE, ' ')
      .trim()
  );
}

/** A VAT id as identity: upper case, without white space. */
export function normalizeVatId(vatId: string): string {
  return vatId.toUpperCase().replace(WHITE_SPACE, '');
}

/**
 * The supplier's identity: `vat:` + VAT id when the supplier has one (the tax authority's
 * identifier beats any spelling of the name), else `name:` + the normalized name.
 * @throws Error when neither yields an identity (a programming mistake: validate first)
 */
export function supplierKeyOf(supplier: { name: string; vatId?: string | null }): string {
  const vatId = supplier.vatId == null ? '' : normalizeVatId(supplier.vatId);
  if (vatId !== '') return `vat:${vatId}`;
  const name = normalizeSupplierName(supplier.name);
  if (name === '') throw new Error('a supplier needs a VAT id or a name with more than punctuation');
  return `name:${name}`;
}

/**
 * A supplier's document number as identity: trimmed, upper case, all white space removed.
 * "inv 001" and "INV001" are one document.
 */
export function normalizeDocumentNumber(documentNumber: string): string {
  return documentNumber.toUpperCase().replace(WHITE_SPACE, '');
}
