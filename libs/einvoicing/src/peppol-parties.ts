import {
  endpointOfVatId,
  isPeppolCountry,
  isVatPrefix,
  parsePeppolId,
  type PeppolEndpoint,
} from './peppol-identifiers';
import type { SalesDocument } from './sales-document';

/** The parties of a Peppol document: the seller (BG-4) and the buyer (BG-7), with the rules on them. */

export interface PeppolParty {
  endpoint: PeppolEndpoint;
  name: string;
  address: {
    street: string | null;
    city: string | null;
    postalCode: string | null;
    countryCode: string;
  };
  vatId: string | null;
  legalName: string;
  /** BT-30 / BT-47, with the ICD scheme where the country's Peppol rules demand one. */
  legalId: { id: string; scheme: string | null } | null;
  email: string | null;
}

/** Text without control characters, whitespace collapsed; null when nothing is left (PEPPOL-EN16931-R008). */
export function clean(text: string | null | undefined): string | null {
  if (text === null || text === undefined) return null;
  // Control characters (C0, DEL, C1) are no XML 1.0 text; they become spaces.
  const cleaned = text
    .replace(/\p{Cc}+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return cleaned === '' ? null : cleaned;
}

/** Seller countries whose Peppol national rules ask for what ledgerkey does not keep: rule → why. */
const UNSUPPORTED_SELLER_COUNTRIES: Readonly<Record<string, [string, string]>> = {
  GR: ['GR-R-001', 'Greek sellers need a six-segment invoice number and a MARK number'],
  IS: ['IS-R', 'the Icelandic national rules are not implemented'],
};

/** Collects the rules a document would break, each once with the reason. */
export type Problems = (rule: string, message: string) => void;

/** The seller (BG-4) from the profile snapshot, with the EN 16931, Peppol and national rules on it. */
export function sellerOf(document: SalesDocument, problem: Problems): PeppolParty {
  const { seller } = document;
  const vatId = clean(seller.vatId);
  if (!vatId) {
    problem(
      'BR-S-02',
      'the seller has no VAT id (company profile `vatId`), which every VAT category used here requires',
    );
  } else if (!isVatPrefix(vatId.slice(0, 2))) {
    problem('BR-CO-09', `the seller VAT id ${vatId} does not start with a country prefix`);
  }
  const street = clean(seller.address.street);
  const city = clean(seller.address.city);
  const postalCode = clean(seller.address.postalCode);
  if (!street || !city || !postalCode) {
    problem(
      'BR-08',
      'the seller has no complete postal address (company profile `address`: street, city, postalCode)',
    );
  }
  const country = seller.address.countryCode;
  if (!isPeppolCountry(country)) problem('BR-09', `the seller country ${country} is not an ISO 3166-1 code`);
  const unsupported = UNSUPPORTED_SELLER_COUNTRIES[country];
  if (unsupported) problem(...unsupported);

  const endpoint = seller.peppolId ? parsePeppolId(seller.peppolId) : vatId ? endpointOfVatId(vatId) : null;
  if (!endpoint && seller.peppolId) {
    problem(
      'PEPPOL-EN16931-CL008',
      `the seller Peppol id ${seller.peppolId} is not scheme:identifier with a Peppol EAS scheme`,
    );
  } else if (!endpoint) {
    problem(
      'PEPPOL-EN16931-R020',
      'the seller has no Peppol id (company profile `peppolId`) and no VAT id that is a Peppol endpoint',
    );
  }

  const registration = clean(seller.registrationNumber);
  let legalId: PeppolParty['legalId'] = registration ? { id: registration, scheme: null } : null;
  if (country === 'DK') {
    // DK-R-002, DK-R-014, PEPPOL-COMMON-R042: the CVR number, scheme 0184, written DK + 8 digits.
    const cvr = registration ? /^(?:DK)?([0-9]{8})$/.exec(registration) : null;
    if (!cvr) problem('DK-R-002', 'a Danish seller needs its 8-digit CVR number as registration number');
    else legalId = { id: `DK${cvr[1]}`, scheme: '0184' };
  }
  if (country === 'NL' && registration) legalId = { id: registration, scheme: '0106' }; // NL-R-003: KVK
  if (country === 'NL' && document.kind === 'invoice' && !clean(seller.iban)) {
    problem('NL-R-007', 'a Dutch seller must name a means of payment: the company profile needs an IBAN');
  }
  if (country === 'NO' && vatId && !/^NO[0-9]{9}MVA$/.test(vatId)) {
    problem('NO-R-001', 'a Norwegian VAT id is NO + 9 digits + MVA');
  }
  if (country === 'SE' && vatId?.startsWith('SE') && !/^SE[0-9]{12}$/.test(vatId)) {
    problem('SE-R-001', 'a Swedish VAT id is SE + 12 digits');
  }
  const name = clean(seller.legalName) ?? '';
  return {
    // Only read when no problem was found, so never null then.
    endpoint: endpoint as PeppolEndpoint,
    name,
    address: { street, city, postalCode, countryCode: country },
    vatId,
    legalName: name,
    legalId,
    email: clean(seller.email),
  };
}

/** The buyer (BG-7) from the document's customer; its endpoint comes from its VAT id. */
export function buyerOf(document: SalesDocument, sellerCountry: string, problem: Problems): PeppolParty {
  const { buyer } = document;
  const name = clean(buyer.name);
  if (!name) problem('BR-07', 'the customer has no name');
  const vatId = clean(buyer.vatId);
  if (vatId && !isVatPrefix(vatId.slice(0, 2))) {
    problem('BR-CO-09', `the customer VAT id ${vatId} does not start with a country prefix`);
  }
  if (!isPeppolCountry(buyer.countryCode)) {
    problem('BR-11', `the customer country ${buyer.countryCode} is not an ISO 3166-1 code`);
  }
  const endpoint = vatId ? endpointOfVatId(vatId) : null;
  if (!endpoint) {
    problem(
      'PEPPOL-EN16931-R010',
      vatId
        ? `the customer VAT id ${vatId} is no Peppol endpoint (its country has no VAT-number scheme)`
        : 'the customer has no VAT id to derive its Peppol electronic address from',
    );
  }
  if (sellerCountry === 'NL' && buyer.countryCode === 'NL') {
    problem(
      'NL-R-004',
      'a Dutch seller must give a Dutch customer a structured address (street, city, post code)',
    );
  }
  return {
    endpoint: endpoint as PeppolEndpoint,
    name: name ?? '',
    // The customer's address is free text: it is the street line (BT-50), the country BT-55.
    address: { street: clean(buyer.address), city: null, postalCode: null, countryCode: buyer.countryCode },
    vatId,
    legalName: name ?? '',
    legalId: null,
    email: clean(buyer.email),
  };
}
