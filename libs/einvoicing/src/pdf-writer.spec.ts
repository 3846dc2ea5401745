import { pdfText as textOf } from '../../../test/support/pdf-text';
import { writePdf } from './pdf-writer';
import { aBuyer, aCreditNote, anInvoice, aSeller } from '../../../test/support/sales-document.builder';

describe('writePdf', () => {
  it('shows seller, buyer, number, dates, lines, VAT per rate, totals and payment details', async () => {
    const text = await textOf(await writePdf(anInvoice()));
    for (const expected of [
      'Invoice INV-000042',
      'Issue date:',
      '2026-11-30',
      'Due date:',
      '2026-12-30',
      'order-1041',
      // seller
      'UAB Šviesų ąžuolas',
      'Gedimino pr. 9',
      'LT-01103 Vilnius',
      'VAT id: LT100001234567',
      'Registration no.: 304561234',
      'saskaitos@azuolas.lt',
      // buyer
      'Ærø Øko Fødevarer ApS',
      'Søndergade 5, 5970 Ærøskøbing',
      'VAT id: DK12345678',
      'faktura@aeroe.dk',
      // lines
      'Konsultacija: ąčęėįšųūž',
      'Knyga „Žalgiris“',
      '50.00',
      '19.99',
      '59.97',
      // VAT per rate
      '21 %',
      'net 100.00 EUR',
      'VAT 21.00 EUR',
      '9 %',
      'net 59.97 EUR',
      'VAT 5.40 EUR',
      // totals
      'Net total',
      '159.97 EUR',
      'VAT total',
      '26.40 EUR',
      'Total due',
      '186.37 EUR',
      // payment
      'IBAN:',
      'LT12 1000 0111 0100 1000',
      'Reference:',
      'Ačiū! Tak for handlen, blåbærgrød.',
    ]) {
      expect(text).toContain(expected);
    }
  });

  it('keeps every Lithuanian and Danish letter', async () => {
    const letters = 'ąčęėįšųūž ĄČĘĖĮŠŲŪŽ ÆØÅæøå';
    const text = await textOf(await writePdf(anInvoice({ note: letters })));
    expect(text).toContain(letters);
  });

  it('renders a credit note with the invoice it corrects and no payment block', async () => {
    const text = await textOf(await writePdf(aCreditNote()));
    expect(text).toContain('Credit note CN-000007');
    expect(text).toContain('INV-000042 of 2026-11-30');
    expect(text).toContain('Order change');
    expect(text).toContain('Total credited');
    expect(text).toContain('60.50 EUR');
    expect(text).not.toContain('IBAN:');
  });

  it('is deterministic: the same document gives the same bytes, also later', async () => {
    const first = await writePdf(anInvoice());
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const second = await writePdf(anInvoice());
    expect(second.equals(first)).toBe(true);
    expect(first.subarray(0, 5).toString()).toBe('%PDF-');
    expect((await writePdf(anInvoice({ number: 'INV-000043' }))).equals(first)).toBe(false);
  });

  it('breaks long documents across pages and keeps every line', async () => {
    const lines = Array.from({ length: 60 }, (_, index) => ({
      position: index + 1,
      description: `Eilutė ${index + 1} — žąsų plunksnos`,
      quantity: '1',
      unitPrice: 100,
      vatRate: '21',
      netAmount: 100,
    }));
    const invoice = anInvoice({
      lines,
      vatBreakdown: [{ vatRate: '21', netAmount: 6000, vatAmount: 1260 }],
      netTotal: 6000,
      vatTotal: 1260,
      grossTotal: 7260,
    });
    const text = await textOf(await writePdf(invoice));
    expect(text).toContain('Eilutė 1 — žąsų plunksnos');
    expect(text).toContain('Eilutė 60 — žąsų plunksnos');
    expect(text).toContain('of 2');
  });

  it('prints a seller without address or IBAN and a buyer without VAT id', async () => {
    const text = await textOf(
      await writePdf(
        anInvoice({
          seller: aSeller({
            address: { street: null, city: null, postalCode: null, countryCode: 'LT' },
            iban: null,
          }),
          buyer: aBuyer({ vatId: null }),
          dueDate: null,
        }),
      ),
    );
    expect(text).toContain('UAB Šviesų ąžuolas');
    expect(text).toContain('on receipt');
    expect(text).not.toContain('IBAN:');
  });
});
