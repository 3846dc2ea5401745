import { formatMinorUnits } from '@ledgerkey/money';
import { create } from 'xmlbuilder2';
import { xmlText } from '@ledgerkey/documents';
import {
  ISAF_CURRENCY,
  ISAF_NAMESPACE,
  type IsafDocumentTotal,
  type IsafFileInput,
  type IsafParty,
} from './isaf-file';

const XSI_NAMESPACE = 'http://www.w3.org/2001/XMLSchema-instance';

type XMLBuilder = ReturnType<typeof create>;

/** "Not declared": i.SAF's value for a required text the source does not have. */
const NOT_DECLARED = 'ND';

/** `xs:dateTime` without fractions, UTC: 2026-12-01T09:30:00. */
function dateTime(instant: Date): string {
  return instant.toISOString().slice(0, 19);
}

function partyInfo(parent: XMLBuilder, element: 'CustomerInfo' | 'SupplierInfo', party: IsafParty): void {
  const info = parent.ele(element);
  // Documents keep no party ids of their own: the VAT id identifies the party where there is one.
  info
    .ele(element === 'CustomerInfo' ? 'CustomerID' : 'SupplierID')
    .txt(xmlText(party.vatId ?? NOT_DECLARED));
  info.ele('VATRegistrationNumber').txt(xmlText(party.vatId ?? NOT_DECLARED));
  info.ele('RegistrationNumber').txt(xmlText(NOT_DECLARED));
  info.ele('Country').txt(xmlText(party.countryCode));
  info.ele('Name').txt(xmlText(party.name));
}

function documentTotals(parent: XMLBuilder, totals: IsafDocumentTotal[], sales: boolean): void {
  const element = parent.ele('DocumentTotals');
  for (const total of totals) {
    const row = element.ele('DocumentTotal');
    row.ele('TaxableValue').txt(xmlText(formatMinorUnits(total.taxableValue, ISAF_CURRENCY, 2)));
    row.ele('TaxCode').txt(xmlText(total.taxCode));
    row.ele('TaxPercentage').txt(xmlText(total.vatRate));
    row.ele('Amount').txt(xmlText(formatMinorUnits(total.vatAmount, ISAF_CURRENCY, 2)));
    // Sales totals carry a second VAT point only when it differs from the document's: never here.
    if (sales) row.ele('VATPointDate2').att(XSI_NAMESPACE, 'xsi:nil', 'true');
  }
}

/**
 * An i.SAF 1.2 file (VMI's register of issued and received invoices) in the XSD's element order:
 * Header/FileDescription, then SourceDocuments with PurchaseInvoices and/or SalesInvoices as
 * `dataType` asks. Sections without documents are present and empty: a month without documents
 * is still filed. Built with an XML builder, so every text is escaped.
 */
export function buildIsafFile(input: IsafFileInput): string {
  const root = create({ version: '1.0', encoding: 'UTF-8' }).ele(ISAF_NAMESPACE, 'iSAFFile', {
    'xmlns:xsi': XSI_NAMESPACE,
  });
  const description = root.ele('Header').ele('FileDescription');
  description.ele('FileVersion').txt(xmlText('iSAF1.2'));
  description.ele('FileDateCreated').txt(xmlText(dateTime(input.createdAt)));
  description.ele('DataType').txt(xmlText(input.dataType));
  description.ele('SoftwareCompanyName').txt(xmlText(input.software.companyName));
  description.ele('SoftwareName').txt(xmlText(input.software.name));
  description.ele('SoftwareVersion').txt(xmlText(input.software.version));
  description.ele('RegistrationNumber').txt(xmlText(input.registrationNumber));
  // One file per month: never split into parts.
  description.ele('NumberOfParts').txt(xmlText('1'));
  description.ele('PartNumber').txt(xmlText('1'));
  const criteria = description.ele('SelectionCriteria');
  criteria.ele('SelectionStartDate').txt(xmlText(input.period.from));
  criteria.ele('SelectionEndDate').txt(xmlText(input.period.to));

  const documents = root.ele('SourceDocuments');
  if (input.dataType !== 'S') {
    const purchases = documents.ele('PurchaseInvoices');
    for (const document of input.purchases) {
      const invoice = purchases.ele('Invoice');
      invoice.ele('InvoiceNo').txt(xmlText(document.number));
      partyInfo(invoice, 'SupplierInfo', document.party);
      invoice.ele('InvoiceDate').txt(xmlText(document.date));
      invoice.ele('InvoiceType').txt(xmlText('SF'));
      invoice.ele('SpecialTaxation');
      invoice.ele('References');
      invoice.ele('VATPointDate').txt(xmlText(document.date));
      invoice.ele('RegistrationAccountDate').txt(xmlText(document.registrationDate));
      documentTotals(invoice, document.totals, false);
    }
  }
  if (input.dataType !== 'P') {
    const sales = documents.ele('SalesInvoices');
    for (const document of input.sales) {
      const invoice = sales.ele('Invoice');
      invoice.ele('InvoiceNo').txt(xmlText(document.number));
      partyInfo(invoice, 'CustomerInfo', document.party);
      invoice.ele('InvoiceDate').txt(xmlText(document.date));
      invoice.ele('InvoiceType').txt(xmlText(document.type));
      invoice.ele('SpecialTaxation');
      const references = invoice.ele('References');
      if (document.reference) {
        const reference = references.ele('Reference');
        reference.ele('ReferenceNo').txt(xmlText(document.reference.number));
        reference.ele('ReferenceDate').txt(xmlText(document.reference.date));
      }
      invoice.ele('VATPointDate').txt(xmlText(document.date));
      documentTotals(invoice, document.totals, true);
    }
  }
  return root.end({ prettyPrint: true });
}
