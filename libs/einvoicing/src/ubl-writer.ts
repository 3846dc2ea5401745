import { create } from 'xmlbuilder2';
import type { XMLBuilder } from 'xmlbuilder2/lib/interfaces';
import { xmlText } from '@ledgerkey/documents';
import { formatMinorUnits } from '@ledgerkey/money';
import {
  PEPPOL_CUSTOMIZATION_ID,
  PEPPOL_PROFILE_ID,
  type MinorUnits,
  type PeppolDocument,
  type PeppolParty,
  type VatCategory,
} from './peppol-document';

const CBC = 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2';
const CAC = 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2';
const ROOT_NAMESPACE = {
  Invoice: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
  CreditNote: 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2',
} as const;

/**
 * Writes a Peppol BIS Billing 3.0 document as UBL 2.1 XML (`Invoice` or `CreditNote`), elements
 * in the order the UBL 2.1 schema sequences them. Amounts have two decimals (BR-DEC-*). The
 * same document always gives the same bytes.
 */
export function writeUbl(document: PeppolDocument): string {
  const root = create({ version: '1.0', encoding: 'UTF-8' })
    .ele(ROOT_NAMESPACE[document.kind], document.kind)
    .att('http://www.w3.org/2000/xmlns/', 'xmlns:cac', CAC)
    .att('http://www.w3.org/2000/xmlns/', 'xmlns:cbc', CBC);
  const amount = (parent: XMLBuilder, name: string, value: MinorUnits) =>
    cbc(parent, name, formatMinorUnits(value, document.currency, 2), { currencyID: document.currency });

  cbc(root, 'CustomizationID', PEPPOL_CUSTOMIZATION_ID);
  cbc(root, 'ProfileID', PEPPOL_PROFILE_ID);
  cbc(root, 'ID', document.id);
  cbc(root, 'IssueDate', document.issueDate);
  if (document.kind === 'Invoice') {
    if (document.dueDate) cbc(root, 'DueDate', document.dueDate);
    cbc(root, 'InvoiceTypeCode', document.typeCode);
  } else {
    cbc(root, 'CreditNoteTypeCode', document.typeCode);
  }
  if (document.note) cbc(root, 'Note', document.note);
  cbc(root, 'DocumentCurrencyCode', document.currency);
  cbc(root, 'BuyerReference', document.buyerReference);
  if (document.billingReference) {
    const reference = cac(cac(root, 'BillingReference'), 'InvoiceDocumentReference');
    cbc(reference, 'ID', document.billingReference.id);
    cbc(reference, 'IssueDate', document.billingReference.issueDate);
  }
  writeParty(cac(root, 'AccountingSupplierParty'), document.seller);
  writeParty(cac(root, 'AccountingCustomerParty'), document.buyer);
  if (document.payment) {
    const means = cac(root, 'PaymentMeans');
    cbc(means, 'PaymentMeansCode', document.payment.meansCode, { name: 'SEPA credit transfer' });
    cbc(means, 'PaymentID', document.payment.paymentId);
    cbc(cac(means, 'PayeeFinancialAccount'), 'ID', document.payment.iban);
  }
  cbc(cac(root, 'PaymentTerms'), 'Note', document.paymentTerms);

  const taxTotal = cac(root, 'TaxTotal');
  amount(taxTotal, 'TaxAmount', document.taxTotal);
  for (const row of document.taxSubtotals) {
    const subtotal = cac(taxTotal, 'TaxSubtotal');
    amount(subtotal, 'TaxableAmount', row.taxable);
    amount(subtotal, 'TaxAmount', row.tax);
    writeCategory(cac(subtotal, 'TaxCategory'), row.category, true);
  }

  const totals = cac(root, 'LegalMonetaryTotal');
  amount(totals, 'LineExtensionAmount', document.lineExtension);
  amount(totals, 'TaxExclusiveAmount', document.taxExclusive);
  amount(totals, 'TaxInclusiveAmount', document.taxInclusive);
  amount(totals, 'PayableAmount', document.payable);

  const lineName = document.kind === 'Invoice' ? 'InvoiceLine' : 'CreditNoteLine';
  const quantityName = document.kind === 'Invoice' ? 'InvoicedQuantity' : 'CreditedQuantity';
  for (const line of document.lines) {
    const element = cac(root, lineName);
    cbc(element, 'ID', line.id);
    cbc(element, quantityName, line.quantity, { unitCode: UNIT_CODE });
    amount(element, 'LineExtensionAmount', line.lineNet);
    const item = cac(element, 'Item');
    cbc(item, 'Name', line.name);
    writeCategory(cac(item, 'ClassifiedTaxCategory'), line.category, false);
    const price = cac(element, 'Price');
    cbc(price, 'PriceAmount', formatMinorUnits(line.price, document.currency, 2), {
      currencyID: document.currency,
    });
    if (line.baseQuantity) cbc(price, 'BaseQuantity', line.baseQuantity, { unitCode: UNIT_CODE });
  }
  return root.end({ prettyPrint: true });
}

/** UN/ECE Recommendation 20 "one" (C62): ledgerkey lines have no unit of measure. */
const UNIT_CODE = 'C62';

function cbc(
  parent: XMLBuilder,
  name: string,
  text: string,
  attributes: Record<string, string> = {},
): XMLBuilder {
  const element = parent.ele(CBC, `cbc:${name}`);
  for (const [key, value] of Object.entries(attributes)) element.att(key, xmlText(value));
  return element.txt(xmlText(text));
}

function cac(parent: XMLBuilder, name: string): XMLBuilder {
  return parent.ele(CAC, `cac:${name}`);
}

function writeParty(wrapper: XMLBuilder, party: PeppolParty): void {
  const element = cac(wrapper, 'Party');
  cbc(element, 'EndpointID', party.endpoint.id, { schemeID: party.endpoint.scheme });
  cbc(cac(element, 'PartyName'), 'Name', party.name);
  const address = cac(element, 'PostalAddress');
  if (party.address.street) cbc(address, 'StreetName', party.address.street);
  if (party.address.city) cbc(address, 'CityName', party.address.city);
  if (party.address.postalCode) cbc(address, 'PostalZone', party.address.postalCode);
  cbc(cac(address, 'Country'), 'IdentificationCode', party.address.countryCode);
  if (party.vatId) {
    const taxScheme = cac(element, 'PartyTaxScheme');
    cbc(taxScheme, 'CompanyID', party.vatId);
    cbc(cac(taxScheme, 'TaxScheme'), 'ID', 'VAT');
  }
  const legalEntity = cac(element, 'PartyLegalEntity');
  cbc(legalEntity, 'RegistrationName', party.legalName);
  if (party.legalId) {
    cbc(
      legalEntity,
      'CompanyID',
      party.legalId.id,
      party.legalId.scheme ? { schemeID: party.legalId.scheme } : {},
    );
  }
  if (party.email) cbc(cac(element, 'Contact'), 'ElectronicMail', party.email);
}

/** A TaxCategory (breakdown, with the exemption reason) or ClassifiedTaxCategory (line, without). */
function writeCategory(element: XMLBuilder, category: VatCategory, withReason: boolean): void {
  cbc(element, 'ID', category.code);
  cbc(element, 'Percent', category.percent);
  if (withReason && category.exemptionReasonCode)
    cbc(element, 'TaxExemptionReasonCode', category.exemptionReasonCode);
  if (withReason && category.exemptionReason) cbc(element, 'TaxExemptionReason', category.exemptionReason);
  cbc(cac(element, 'TaxScheme'), 'ID', 'VAT');
}
