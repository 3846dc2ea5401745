import fc from 'fast-check';
import { brokenRules, parseUbl } from '../../../test/support/peppol-rules';
import { EInvoiceNotRepresentableError } from './einvoicing.errors';
import { peppolDocumentOf } from './peppol-document';
import type { SalesDocument } from './sales-document';
import {
  aBuyer,
  aCreditNote,
  aLine,
  anInvoice,
  aSeller,
  totalsOf,
} from '../../../test/support/sales-document.builder';
import { writeUbl } from './ubl-writer';

const ublOf = (document: SalesDocument) => writeUbl(peppolDocumentOf(document));

/** The rule ids a refused document names. */
function refusal(document: SalesDocument): string[] {
  try {
    peppolDocumentOf(document);
  } catch (error) {
    if (error instanceof EInvoiceNotRepresentableError) return error.problems.map((problem) => problem.rule);
    throw error;
  }
  throw new Error('the document was not refused');
}

describe('Peppol BIS 3 UBL: invoices', () => {
  const xml = ublOf(anInvoice());
  const doc = parseUbl(xml);

  it('passes every EN 16931 and Peppol rule the oracle checks', () => {
    expect(brokenRules(xml)).toEqual([]);
  });

  it('PEPPOL-EN16931-R004 / R001 / R007: Peppol BIS Billing 3.0 customization and profile ids', () => {
    expect(doc.root.localName).toBe('Invoice');
    expect(doc.text('cbc:CustomizationID')).toBe(
      'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0',
    );
    expect(doc.text('cbc:ProfileID')).toBe('urn:fdc:peppol.eu:2017:poacc:billing:01:1.0');
  });

  it('BR-02, BR-03, BR-04 (PEPPOL-EN16931-P0100), BR-05: number, dates, type 380, currency', () => {
    expect(doc.text('cbc:ID')).toBe('INV-000042');
    expect(doc.text('cbc:IssueDate')).toBe('2026-11-30');
    expect(doc.text('cbc:DueDate')).toBe('2026-12-30');
    expect(doc.text('cbc:InvoiceTypeCode')).toBe('380');
    expect(doc.text('cbc:DocumentCurrencyCode')).toBe('EUR');
  });

  it('PEPPOL-EN16931-R003: the order id is the buyer reference; the number when there is no order', () => {
    expect(doc.text('cbc:BuyerReference')).toBe('order-1041');
    expect(parseUbl(ublOf(anInvoice({ orderId: null }))).text('cbc:BuyerReference')).toBe('INV-000042');
  });

  it('PEPPOL-EN16931-R020 / R010, BR-62 / BR-63, CL008: endpoints with EAS schemes derived from VAT ids', () => {
    const seller = doc.nodes('cac:AccountingSupplierParty/cac:Party/cbc:EndpointID')[0];
    expect([seller.getAttribute('schemeID'), seller.textContent]).toEqual(['9937', 'LT100001234567']);
    const buyer = doc.nodes('cac:AccountingCustomerParty/cac:Party/cbc:EndpointID')[0];
    // PEPPOL-COMMON-R042: a Danish VAT number is the CVR identifier DK + 8 digits, scheme 0184.
    expect([buyer.getAttribute('schemeID'), buyer.textContent]).toEqual(['0184', 'DK12345678']);
  });

  it('uses the seller Peppol id from the profile when it has one', () => {
    const withId = parseUbl(ublOf(anInvoice({ seller: aSeller({ peppolId: '0200:304561234' }) })));
    const endpoint = withId.nodes('cac:AccountingSupplierParty/cac:Party/cbc:EndpointID')[0];
    expect([endpoint.getAttribute('schemeID'), endpoint.textContent]).toEqual(['0200', '304561234']);
  });

  it('BR-06 … BR-11, BR-CO-26: seller and buyer names, addresses, VAT and registration ids', () => {
    const seller = 'cac:AccountingSupplierParty/cac:Party/';
    expect(doc.text(`${seller}cac:PartyLegalEntity/cbc:RegistrationName`)).toBe('UAB Šviesų ąžuolas');
    expect(doc.text(`${seller}cac:PartyLegalEntity/cbc:CompanyID`)).toBe('304561234');
    expect(doc.text(`${seller}cac:PostalAddress/cbc:StreetName`)).toBe('Gedimino pr. 9');
    expect(doc.text(`${seller}cac:PostalAddress/cbc:CityName`)).toBe('Vilnius');
    expect(doc.text(`${seller}cac:PostalAddress/cbc:PostalZone`)).toBe('LT-01103');
    expect(doc.text(`${seller}cac:PostalAddress/cac:Country/cbc:IdentificationCode`)).toBe('LT');
    expect(doc.text(`${seller}cac:PartyTaxScheme/cbc:CompanyID`)).toBe('LT100001234567');
    const buyer = 'cac:AccountingCustomerParty/cac:Party/';
    expect(doc.text(`${buyer}cac:PartyLegalEntity/cbc:RegistrationName`)).toBe('Ærø Øko Fødevarer ApS');
    expect(doc.text(`${buyer}cac:PostalAddress/cbc:StreetName`)).toBe('Søndergade 5, 5970 Ærøskøbing');
    expect(doc.text(`${buyer}cac:PostalAddress/cac:Country/cbc:IdentificationCode`)).toBe('DK');
    expect(doc.text(`${buyer}cac:PartyTaxScheme/cbc:CompanyID`)).toBe('DK12345678');
  });

  it('BR-S-08, BR-S-09, BR-CO-17: one S breakdown per rate with VAT = taxable × rate', () => {
    const rows = doc
      .nodes('cac:TaxTotal/cac:TaxSubtotal')
      .map((row) => [
        doc.text('cac:TaxCategory/cbc:ID', row),
        doc.text('cac:TaxCategory/cbc:Percent', row),
        doc.text('cbc:TaxableAmount', row),
        doc.text('cbc:TaxAmount', row),
      ]);
    expect(rows).toEqual([
      ['S', '21', '100.00', '21.00'],
      ['S', '9', '59.97', '5.40'],
    ]);
  });

  it('BR-CO-10, BR-CO-13, BR-CO-14, BR-CO-15, BR-CO-16, BR-DEC-*: totals add up, two decimals', () => {
    expect(doc.text('cac:TaxTotal/cbc:TaxAmount')).toBe('26.40');
    expect(doc.text('cac:LegalMonetaryTotal/cbc:LineExtensionAmount')).toBe('159.97');
    expect(doc.text('cac:LegalMonetaryTotal/cbc:TaxExclusiveAmount')).toBe('159.97');
    expect(doc.text('cac:LegalMonetaryTotal/cbc:TaxInclusiveAmount')).toBe('186.37');
    expect(doc.text('cac:LegalMonetaryTotal/cbc:PayableAmount')).toBe('186.37');
  });

  it('BR-61, BR-CO-25: SEPA credit transfer to the seller IBAN and payment terms', () => {
    expect(doc.text('cac:PaymentMeans/cbc:PaymentMeansCode')).toBe('58');
    expect(doc.text('cac:PaymentMeans/cbc:PaymentID')).toBe('INV-000042');
    expect(doc.text('cac:PaymentMeans/cac:PayeeFinancialAccount/cbc:ID')).toBe('LT121000011101001000');
    expect(doc.text('cac:PaymentTerms/cbc:Note')).toBe('Payment due by 2026-12-30');
    const noDueDate = parseUbl(ublOf(anInvoice({ dueDate: null, seller: aSeller({ iban: null }) })));
    expect(noDueDate.text('cbc:DueDate')).toBeNull();
    expect(noDueDate.text('cac:PaymentTerms/cbc:Note')).toBe('Payable on receipt');
    expect(noDueDate.nodes('cac:PaymentMeans')).toHaveLength(0);
  });

  it('PEPPOL-EN16931-R008, R002: no empty elements, at most one note, even for blank notes and addresses', () => {
    const blank = ublOf(anInvoice({ note: ' \n ', buyer: aBuyer({ address: '   ', email: null }) }));
    expect(brokenRules(blank)).toEqual([]);
    expect(parseUbl(blank).nodes('cbc:Note')).toHaveLength(0);
  });

  it('is deterministic', () => {
    expect(ublOf(anInvoice())).toBe(xml);
  });
});

describe('Peppol BIS 3 UBL: credit notes', () => {
  const xml = ublOf(aCreditNote());
  const doc = parseUbl(xml);

  it('passes every rule the oracle checks', () => {
    expect(brokenRules(xml)).toEqual([]);
  });

  it('is a CreditNote (PEPPOL-EN16931-P0101: type 381) with CreditNoteLine and CreditedQuantity', () => {
    expect(doc.root.localName).toBe('CreditNote');
    expect(doc.root.namespaceURI).toBe('urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2');
    expect(doc.text('cbc:CreditNoteTypeCode')).toBe('381');
    expect(doc.nodes('cac:CreditNoteLine')).toHaveLength(1);
    expect(doc.text('cac:CreditNoteLine/cbc:CreditedQuantity')).toBe('1');
    expect(doc.text('cac:LegalMonetaryTotal/cbc:PayableAmount')).toBe('60.50');
  });

  it('BR-55: references the invoice it corrects through BillingReference', () => {
    expect(doc.text('cac:BillingReference/cac:InvoiceDocumentReference/cbc:ID')).toBe('INV-000042');
    expect(doc.text('cac:BillingReference/cac:InvoiceDocumentReference/cbc:IssueDate')).toBe('2026-11-30');
    expect(doc.text('cbc:Note')).toBe('Reason: Order change. Grąžinta viena konsultacija');
    expect(doc.nodes('cac:PaymentMeans')).toHaveLength(0);
  });
});

describe('Peppol BIS 3 UBL: VAT categories', () => {
  const categories = (xml: string) =>
    parseUbl(xml)
      .nodes('cac:TaxTotal/cac:TaxSubtotal')
      .map((row) => {
        const doc = parseUbl(xml);
        return [
          doc.text('cac:TaxCategory/cbc:ID', row),
          doc.text('cac:TaxCategory/cbc:Percent', row),
          doc.text('cac:TaxCategory/cbc:TaxExemptionReasonCode', row),
          doc.text('cbc:TaxableAmount', row),
        ];
      });

  it('BR-AE-01 … BR-AE-10: a zero rate between VAT ids of two member states is a reverse charge', () => {
    const invoice = anInvoice({
      buyer: aBuyer({ name: 'Müller GmbH', vatId: 'DE123456789', countryCode: 'DE' }),
      ...totalsOf([aLine({ vatRate: '0' }), aLine({ position: 2, vatRate: '21' })]),
    });
    const xml = ublOf(invoice);
    expect(brokenRules(xml)).toEqual([]);
    expect(categories(xml)).toEqual([
      ['S', '21', null, '100.00'],
      ['AE', '0', 'VATEX-EU-AE', '100.00'],
    ]);
    const buyerEndpoint = parseUbl(xml).nodes('cac:AccountingCustomerParty/cac:Party/cbc:EndpointID')[0];
    expect(buyerEndpoint.getAttribute('schemeID')).toBe('9930');
  });

  it('BR-Z-01 … BR-Z-10: a domestic zero rate is zero rated, without exemption reason', () => {
    const invoice = anInvoice({
      buyer: aBuyer({
        name: 'UAB Pirkėjas',
        vatId: 'LT999999999999',
        countryCode: 'LT',
        address: 'Laisvės al. 1, Kaunas',
      }),
      ...totalsOf([
        aLine({ vatRate: '0' }),
        aLine({ position: 2, vatRate: '0', netAmount: 1, unitPrice: 1, quantity: '1' }),
      ]),
    });
    const xml = ublOf(invoice);
    expect(brokenRules(xml)).toEqual([]);
    expect(categories(xml)).toEqual([['Z', '0', null, '100.01']]);
  });

  it('BR-G-01 … BR-G-10: a zero rate to a customer outside the EU is an export', () => {
    const invoice = anInvoice({
      buyer: aBuyer({ name: 'Zürich AG', vatId: 'CHE123456789', countryCode: 'CH' }),
      ...totalsOf([aLine({ vatRate: '0' })]),
    });
    const xml = ublOf(invoice);
    expect(brokenRules(xml)).toEqual([]);
    expect(categories(xml)).toEqual([['G', '0', 'VATEX-EU-G', '100.00']]);
  });

  it('BR-E-01 … BR-E-10: a line marked exempt carries an exemption reason', () => {
    const { lines, ...totals } = totalsOf([aLine({ vatRate: '0' }), aLine({ position: 2 })]);
    const invoice = anInvoice({ ...totals, lines: [{ ...lines[0], vatCategory: 'E' } as never, lines[1]] });
    const xml = ublOf(invoice);
    expect(brokenRules(xml)).toEqual([]);
    expect(categories(xml)).toEqual([
      ['S', '21', null, '100.00'],
      ['E', '0', null, '100.00'],
    ]);
    expect(parseUbl(xml).text('cac:TaxTotal/cac:TaxSubtotal[2]/cac:TaxCategory/cbc:TaxExemptionReason')).toBe(
      'Exempt from VAT',
    );
  });
});

describe('Peppol BIS 3 UBL: a document breaking a rule is never written', () => {
  it('BR-S-02: refused when the seller has no VAT id', () => {
    expect(refusal(anInvoice({ seller: aSeller({ vatId: null }) }))).toEqual([
      'BR-S-02',
      'PEPPOL-EN16931-R020',
    ]);
  });

  it('BR-08: refused when the seller has no complete postal address', () => {
    expect(
      refusal(
        anInvoice({
          seller: aSeller({ address: { street: null, city: null, postalCode: null, countryCode: 'LT' } }),
        }),
      ),
    ).toEqual(['BR-08']);
    expect(
      refusal(
        anInvoice({
          seller: aSeller({
            address: { street: ' ', city: 'Vilnius', postalCode: '01103', countryCode: 'LT' },
          }),
        }),
      ),
    ).toEqual(['BR-08']);
  });

  it('PEPPOL-EN16931-R010: refused when no buyer endpoint can be derived', () => {
    expect(refusal(anInvoice({ buyer: aBuyer({ vatId: null }) }))).toEqual(['PEPPOL-EN16931-R010']);
    expect(refusal(anInvoice({ buyer: aBuyer({ vatId: 'NO123456789MVA', countryCode: 'NO' }) }))).toEqual([
      'PEPPOL-EN16931-R010',
    ]);
  });

  it('PEPPOL-EN16931-CL008: refused when the seller Peppol id has no Peppol scheme', () => {
    expect(refusal(anInvoice({ seller: aSeller({ peppolId: '1234:abc' }) }))).toEqual([
      'PEPPOL-EN16931-CL008',
    ]);
  });

  it('BR-CO-09: refused when a VAT id has no country prefix', () => {
    expect(refusal(anInvoice({ seller: aSeller({ vatId: '100001234567' }) }))).toContain('BR-CO-09');
  });

  it('BR-DEC-18: refused for a three-decimal currency', () => {
    expect(refusal(anInvoice({ currency: 'KWD' }))).toEqual(['BR-DEC-18']);
  });

  it('DK-R-002 / DK-R-014: a Danish seller needs its CVR number, written with scheme 0184', () => {
    const danish = aSeller({
      vatId: 'DK87654321',
      address: { street: 'Nørregade 1', city: 'København', postalCode: '1165', countryCode: 'DK' },
      registrationNumber: null,
    });
    expect(refusal(anInvoice({ seller: danish }))).toEqual(['DK-R-002']);
    const xml = ublOf(anInvoice({ seller: { ...danish, registrationNumber: '87654321' } }));
    expect(brokenRules(xml)).toEqual([]);
    const companyId = parseUbl(xml).nodes(
      'cac:AccountingSupplierParty/cac:Party/cac:PartyLegalEntity/cbc:CompanyID',
    )[0];
    expect([companyId.getAttribute('schemeID'), companyId.textContent]).toEqual(['0184', 'DK87654321']);
  });

  it('GR-R-001: a Greek seller is refused (its national numbering is not kept)', () => {
    const greek = aSeller({
      vatId: 'EL123456789',
      address: { street: 'Ermou 1', city: 'Athina', postalCode: '10563', countryCode: 'GR' },
    });
    expect(refusal(anInvoice({ seller: greek }))).toEqual(['GR-R-001']);
  });

  it('stored totals that do not add up are a bug, not a document: it throws', () => {
    expect(() => peppolDocumentOf(anInvoice({ grossTotal: 1 }))).toThrow(/BR-CO-15/);
    expect(() => peppolDocumentOf(anInvoice({ netTotal: 1 }))).toThrow(/BR-CO-10/);
  });
});

describe('Peppol BIS 3 UBL: any document ledgerkey can issue passes (property)', () => {
  const line = fc.record({
    description: fc.string({ minLength: 1, maxLength: 40 }).filter((text) => text.trim().length > 0),
    quantity: fc
      .tuple(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 9999 }))
      .filter(([whole, fraction]) => whole > 0 || fraction > 0)
      .map(([whole, fraction]) =>
        fraction === 0 ? String(whole) : `${whole}.${String(fraction).padStart(4, '0')}`.replace(/0+$/, ''),
      ),
    unitPrice: fc.integer({ min: 0, max: 10_000_000 }),
    vatRate: fc.constantFrom('0', '5', '9', '21', '25', '5.5', '12.75'),
  });

  it('BR-CO-10 … BR-CO-16, BR-S-08/09, PEPPOL-EN16931-R120 and the rest hold for random invoices and credit notes', () => {
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 1, maxLength: 12 }),
        fc.constantFrom('EUR', 'DKK', 'JPY'),
        fc.constantFrom('DK12345678', 'LT999999999999', 'CHE123456789'),
        fc.boolean(),
        (lines, currency, buyerVat, creditNote) => {
          const numbered = lines.map((entry, index) => ({ ...entry, position: index + 1, netAmount: 0 }));
          const buyer = aBuyer({
            vatId: buyerVat,
            countryCode: buyerVat.slice(0, 2) === 'CH' ? 'CH' : buyerVat.slice(0, 2),
          });
          const base = { currency, buyer, ...totalsOf(numbered) };
          const document = creditNote ? aCreditNote(base) : anInvoice(base);
          expect(brokenRules(ublOf(document))).toEqual([]);
        },
      ),
      { numRuns: 100 },
    );
  });
});
