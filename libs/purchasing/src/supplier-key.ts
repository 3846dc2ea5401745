/**
 * Who issued a supplier document, and which of their documents it is, in the canonical forms
 * the duplicate rule compares (see {@link SupplierDocument}).
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
 * What the duplicate rule compares about a supplier: the normalized VAT id (null without one)
 * and the normalized name (may be empty when a VAT id identifies the supplier).
 */
export interface SupplierIdentity {
  vatId: string | null;
  nameKey: string;
}

/** @throws Error when neither VAT id nor name yields an identity (a programming mistake: validate first) */
export function supplierIdentityOf(supplier: { name: string; vatId?: string | null }): SupplierIdentity {
  const vatId = supplier.vatId == null ? '' : normalizeVatId(supplier.vatId);
  const nameKey = normalizeSupplierName(supplier.name);
  if (vatId === '' && nameKey === '') {
    throw new Error('a supplier needs a VAT id or a name with more than punctuation');
  }
  return { vatId: vatId === '' ? null : vatId, nameKey };
}

/**
 * The supplier's key for the unique backstop: `vat:` + VAT id when the supplier has one, else
 * `name:` + the normalized name. Two documents with equal keys and numbers are duplicates; the
 * full rule (see {@link SupplierDocument}) also catches a VAT id on one side only.
 * @throws Error when neither yields an identity (a programming mistake: validate first)
 */
export function supplierKeyOf(supplier: { name: string; vatId?: string | null }): string {
  return keyOf(supplierIdentityOf(supplier));
}

function keyOf(identity: SupplierIdentity): string {
  return identity.vatId !== null ? `vat:${identity.vatId}` : `name:${identity.nameKey}`;
}

/**
 * A supplier document as the duplicate rule sees it. Two documents of one company are the same
 * when their `documentKey`s are equal and either both have VAT ids and those are equal, or at
 * least one has none and the `nameKey`s are equal. Different VAT ids are different suppliers,
 * whatever their names. (Not transitive, so no single unique index can state it: the database
 * enforces it with a trigger under a per-(company, documentKey) lock.)
 */
export interface SupplierDocument extends SupplierIdentity {
  supplierKey: string;
  documentKey: string;
}

export function supplierDocumentOf(
  supplier: { name: string; vatId?: string | null },
  documentNumber: string,
): SupplierDocument {
  const identity = supplierIdentityOf(supplier);
  return { ...identity, supplierKey: keyOf(identity), documentKey: normalizeDocumentNumber(documentNumber) };
}

/**
 * A supplier's document number as identity: trimmed, upper case, all white space removed.
 * "inv 001" and "INV001" are one document.
 */
export function normalizeDocumentNumber(documentNumber: string): string {
  return documentNumber.toUpperCase().replace(WHITE_SPACE, '');
}
