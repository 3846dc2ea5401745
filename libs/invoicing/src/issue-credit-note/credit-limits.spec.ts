import { CreditExceedsInvoiceError, CreditNoteEmptyError } from '../invoicing.errors';
import { computeCredit, type CreditedAtRate } from './credit-limits';

const invoice = {
  number: 'INV-000001',
  vatBreakdown: [
    { vatRate: '21', netAmount: 10000, vatAmount: 2100 },
    { vatRate: '9', netAmount: 3000, vatAmount: 270 },
  ],
};
const line = (unitPrice: number, vatRate: string, quantity = '1') => ({
  description: 'x',
  quantity,
  unitPrice,
  vatRate,
});

describe('computeCredit', () => {
  it('credits exactly the remainder per rate when no lines are given', () => {
    const credited = new Map<string, CreditedAtRate>([['21', { net: 4000, vat: 840 }]]);
    const result = computeCredit(invoice, credited, null);
    expect(result.vatBreakdown).toEqual([
      { vatRate: '21', netAmount: 6000, vatAmount: 1260 },
      { vatRate: '9', netAmount: 3000, vatAmount: 270 },
    ]);
    expect(result.lines.map((l) => [l.vatRate, l.quantity, l.unitPrice, l.netAmount])).toEqual([
      ['21', '1', 6000, 6000],
      ['9', '1', 3000, 3000],
    ]);
    expect(result.grossTotal).toBe(6000 + 1260 + 3000 + 270);
  });

  it('refuses a full credit of a fully credited invoice', () => {
    const credited = new Map<string, CreditedAtRate>([
      ['21', { net: 10000, vat: 2100 }],
      ['9', { net: 3000, vat: 270 }],
    ]);
    expect(() => computeCredit(invoice, credited, null)).toThrow(CreditExceedsInvoiceError);
  });

  it('computes VAT per rate on the credited nets', () => {
    const result = computeCredit(invoice, new Map(), [line(2500, '21'), line(2500, '21'), line(1000, '9')]);
    expect(result.vatBreakdown).toEqual([
      { vatRate: '21', netAmount: 5000, vatAmount: 1050 },
      { vatRate: '9', netAmount: 1000, vatAmount: 90 },
    ]);
    expect(result).toMatchObject({ netTotal: 6000, vatTotal: 1140, grossTotal: 7140 });
  });

  it('takes the whole remaining VAT when the whole remaining net of a rate is credited', () => {
    // Invoice of three nets of 1 at 21 %: VAT on the sum is round(0.63) = 1.
    const small = { number: 'INV-000002', vatBreakdown: [{ vatRate: '21', netAmount: 3, vatAmount: 1 }] };
    const first = computeCredit(small, new Map(), [line(1, '21')]);
    const second = computeCredit(small, new Map([['21', { net: 1, vat: first.vatTotal }]]), [line(1, '21')]);
    const last = computeCredit(small, new Map([['21', { net: 2, vat: first.vatTotal + second.vatTotal }]]), [
      line(1, '21'),
    ]);
    expect([first.vatTotal, second.vatTotal, last.vatTotal]).toEqual([0, 0, 1]);
  });

  it('never credits more VAT than remains at a rate, whatever the rounding', () => {
    // net 3 at 50 %: invoice VAT round(1.5) = 2; two credits of net 1 would each round 0.5 up to 1.
    const half = { number: 'INV-000003', vatBreakdown: [{ vatRate: '50', netAmount: 3, vatAmount: 2 }] };
    const first = computeCredit(half, new Map(), [line(1, '50')]);
    const second = computeCredit(half, new Map([['50', { net: 1, vat: 1 }]]), [line(1, '50')]);
    const third = computeCredit(half, new Map([['50', { net: 2, vat: 2 }]]), [line(1, '50')]);
    expect([first.vatTotal, second.vatTotal, third.vatTotal]).toEqual([1, 1, 0]);
  });

  it('refuses a rate the invoice lacks and a net above what remains', () => {
    expect(() => computeCredit(invoice, new Map(), [line(100, '5')])).toThrow(/no lines at 5% VAT/);
    expect(() =>
      computeCredit(invoice, new Map([['9', { net: 2000, vat: 180 }]]), [line(1001, '9')]),
    ).toThrow(/exceeds the 1000 not yet credited/);
  });

  it('refuses a credit of nothing', () => {
    expect(() => computeCredit(invoice, new Map(), [line(0, '21')])).toThrow(CreditNoteEmptyError);
  });
});
