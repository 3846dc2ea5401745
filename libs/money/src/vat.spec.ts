import {
  AmountOutOfRangeError,
  MAX_QUANTITY_SCALE,
  MAX_UNIT_PRICE,
  MAX_VAT_RATE_SCALE,
  computeDocumentTotals,
  type DocumentTotals,
  type PricedLine,
} from './vat';

function line(quantity: string, unitPrice: number, vatRate: string): PricedLine {
  return { quantity, unitPrice, vatRate };
}

function captureError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw');
}

function expectTotalsIdentity(totals: DocumentTotals): void {
  const lineSum = totals.lineNetAmounts.reduce((sum, amount) => sum + amount, 0);
  const breakdownNet = totals.vatBreakdown.reduce((sum, row) => sum + row.netAmount, 0);
  const breakdownVat = totals.vatBreakdown.reduce((sum, row) => sum + row.vatAmount, 0);
  expect(totals.netTotal).toBe(lineSum);
  expect(totals.netTotal).toBe(breakdownNet);
  expect(totals.vatTotal).toBe(breakdownVat);
  expect(totals.grossTotal).toBe(totals.netTotal + totals.vatTotal);
}

describe('constants', () => {
  it('match the API contract', () => {
    expect(MAX_QUANTITY_SCALE).toBe(4);
    expect(MAX_VAT_RATE_SCALE).toBe(2);
    expect(MAX_UNIT_PRICE).toBe(1_000_000_000_000);
  });
});

describe('computeDocumentTotals', () => {
  describe('line net rounding (half away from zero)', () => {
    it.each([
      ['0.5', 1, 1],
      ['1.5', 1, 2],
      ['2.5', 1, 3],
      ['0.25', 3, 1],
      ['0.0001', 4999, 0],
      ['0.0001', 5000, 1],
      ['1.005', 100, 101],
    ])('quantity %s × unitPrice %d → line net %d', (quantity, unitPrice, expected) => {
      const totals = computeDocumentTotals([line(quantity, unitPrice, '0')]);
      expect(totals.lineNetAmounts).toEqual([expected]);
      expect(totals.netTotal).toBe(expected);
    });

    it('keeps line nets in input order', () => {
      const totals = computeDocumentTotals([line('3', 10, '0'), line('1', 7, '21'), line('0.5', 5, '9')]);
      expect(totals.lineNetAmounts).toEqual([30, 7, 3]);
    });
  });

  it('computes VAT on the sum of nets per rate, not per line', () => {
    const totals = computeDocumentTotals([line('1', 1, '21'), line('1', 1, '21'), line('1', 1, '21')]);
    // Per-line VAT would be round(0.21) = 0 three times; per-rate VAT is round(0.63) = 1.
    expect(totals).toEqual({
      lineNetAmounts: [1, 1, 1],
      vatBreakdown: [{ vatRate: '21', netAmount: 3, vatAmount: 1 }],
      netTotal: 3,
      vatTotal: 1,
      grossTotal: 4,
    });
  });

  it('rounds per-rate VAT half away from zero at the .5 boundary', () => {
    const totals = computeDocumentTotals([line('1', 50, '1'), line('1', 10, '5.5')]);
    expect(totals.vatBreakdown).toEqual([
      { vatRate: '5.5', netAmount: 10, vatAmount: 1 },
      { vatRate: '1', netAmount: 50, vatAmount: 1 },
    ]);
    expect(totals.vatTotal).toBe(2);
  });

  it('handles multiple rates including "0"', () => {
    const totals = computeDocumentTotals([
      line('2', 1000, '21'),
      line('1.5', 333, '9'),
      line('3', 100, '0'),
      line('1', 999, '21'),
    ]);
    expect(totals).toEqual({
      lineNetAmounts: [2000, 500, 300, 999],
      vatBreakdown: [
        { vatRate: '21', netAmount: 2999, vatAmount: 630 },
        { vatRate: '9', netAmount: 500, vatAmount: 45 },
        { vatRate: '0', netAmount: 300, vatAmount: 0 },
      ],
      netTotal: 3799,
      vatTotal: 675,
      grossTotal: 4474,
    });
    expectTotalsIdentity(totals);
  });

  it('produces a zero-VAT row for rate "0"', () => {
    const totals = computeDocumentTotals([line('2.5', 999, '0')]);
    expect(totals).toEqual({
      lineNetAmounts: [2498],
      vatBreakdown: [{ vatRate: '0', netAmount: 2498, vatAmount: 0 }],
      netTotal: 2498,
      vatTotal: 0,
      grossTotal: 2498,
    });
  });

  it('merges numerically equal rates into one canonical row', () => {
    const totals = computeDocumentTotals([
      line('1', 100, '21'),
      line('1', 100, '21.0'),
      line('1', 100, '21.00'),
      line('1', 100, '5.50'),
    ]);
    expect(totals.vatBreakdown).toEqual([
      { vatRate: '21', netAmount: 300, vatAmount: 63 },
      { vatRate: '5.5', netAmount: 100, vatAmount: 6 },
    ]);
    expect(totals.grossTotal).toBe(469);
  });

  it('sorts the breakdown by rate descending numerically, not lexically', () => {
    const totals = computeDocumentTotals([
      line('1', 1000, '5.5'),
      line('1', 1000, '21'),
      line('1', 1000, '0'),
      line('1', 1000, '9'),
      line('1', 1000, '10'),
      line('1', 1000, '100'),
    ]);
    expect(totals.vatBreakdown.map((row) => row.vatRate)).toEqual(['100', '21', '10', '9', '5.5', '0']);
    expect(totals.vatBreakdown.map((row) => row.vatAmount)).toEqual([1000, 210, 100, 90, 55, 0]);
    expect(totals.vatTotal).toBe(1455);
    expect(totals.grossTotal).toBe(7455);
  });

  it('keeps grossTotal = netTotal + vatTotal with uneven roundings', () => {
    const totals = computeDocumentTotals([
      line('0.3333', 1999, '21'),
      line('7.125', 13, '9'),
      line('1.0001', 999_999, '21'),
      line('2', 1, '5.5'),
    ]);
    expect(totals.lineNetAmounts).toEqual([666, 93, 1_000_099, 2]);
    expect(totals.netTotal).toBe(1_000_860);
    expect(totals.vatTotal).toBe(210_169);
    expect(totals.grossTotal).toBe(1_211_029);
    expectTotalsIdentity(totals);
  });

  it('returns zero totals and an empty breakdown for no lines', () => {
    expect(computeDocumentTotals([])).toEqual({
      lineNetAmounts: [],
      vatBreakdown: [],
      netTotal: 0,
      vatTotal: 0,
      grossTotal: 0,
    });
  });

  describe('range limits', () => {
    it('accepts amounts exactly at Number.MAX_SAFE_INTEGER', () => {
      const totals = computeDocumentTotals([line('9007199254740991', 1, '0')]);
      expect(totals.grossTotal).toBe(Number.MAX_SAFE_INTEGER);
    });

    it('throws AmountOutOfRangeError when a line net exceeds the safe range', () => {
      const error = captureError(() => computeDocumentTotals([line('9007.2', MAX_UNIT_PRICE, '0')]));
      expect(error).toBeInstanceOf(AmountOutOfRangeError);
      expect(error).toBeInstanceOf(Error);
      expect((error as AmountOutOfRangeError).code).toBe('amount_out_of_range');
      expect((error as AmountOutOfRangeError).name).toBe('AmountOutOfRangeError');
      expect((error as Error).message).toMatch(/lines\[0\]/);
    });

    it('throws AmountOutOfRangeError one past Number.MAX_SAFE_INTEGER', () => {
      expect(() => computeDocumentTotals([line('9007199254740992', 1, '0')])).toThrow(AmountOutOfRangeError);
    });

    it('throws AmountOutOfRangeError when netTotal overflows although every line fits', () => {
      const error = captureError(() =>
        computeDocumentTotals([line('5000', MAX_UNIT_PRICE, '0'), line('5000', MAX_UNIT_PRICE, '9')]),
      );
      expect(error).toBeInstanceOf(AmountOutOfRangeError);
      expect((error as Error).message).toMatch(/netTotal/);
    });

    it('throws AmountOutOfRangeError when only grossTotal overflows', () => {
      const error = captureError(() => computeDocumentTotals([line('8000', MAX_UNIT_PRICE, '21')]));
      expect(error).toBeInstanceOf(AmountOutOfRangeError);
      expect((error as Error).message).toMatch(/grossTotal/);
    });
  });

  describe('contract violations (programming mistakes)', () => {
    it.each([
      ['unparseable quantity', line('abc', 1, '21')],
      ['quantity with 5 decimals', line('1.23456', 1, '21')],
      ['zero quantity', line('0', 1, '21')],
      ['vat rate with 3 decimals', line('1', 1, '5.555')],
      ['vat rate above 100', line('1', 1, '100.01')],
      ['negative vat rate', line('1', 1, '-1')],
      ['fractional unit price', line('1', 1.5, '21')],
      ['negative unit price', line('1', -1, '21')],
      ['unit price above the maximum', line('1', MAX_UNIT_PRICE + 1, '21')],
    ])('throws a plain Error for %s', (_name, invalid) => {
      const error = captureError(() => computeDocumentTotals([line('1', 1, '0'), invalid]));
      expect(error).toBeInstanceOf(Error);
      expect(error).not.toBeInstanceOf(AmountOutOfRangeError);
      expect((error as Error).message).toMatch(/lines\[1\]/);
    });
  });
});
