import { formatMinorUnits, isMoneyCurrency, minorUnitDigits } from './currency';

describe('isMoneyCurrency', () => {
  it.each(['EUR', 'USD', 'JPY', 'BHD', 'GBP'])('accepts %s', (code) => {
    expect(isMoneyCurrency(code)).toBe(true);
  });

  it.each(['XXX', 'XTS', 'XAU', 'XDR', 'eur', 'EURO', 'ABC', '', 978, null])('rejects %p', (code) => {
    expect(isMoneyCurrency(code)).toBe(false);
  });
});

describe('formatMinorUnits', () => {
  it.each([
    [12100, 'EUR', undefined, '121.00'],
    [5, 'EUR', undefined, '0.05'],
    [-5, 'EUR', undefined, '-0.05'],
    [0, 'EUR', undefined, '0.00'],
    [1000, 'JPY', undefined, '1000'],
    [1000, 'JPY', 2, '1000.00'],
    [1234, 'KWD', undefined, '1.234'],
    [12100, 'EUR', 4, '121.0000'],
  ])('%p %s with %p digits → %s', (amount, currency, digits, expected) => {
    expect(formatMinorUnits(amount, currency, digits)).toBe(expected);
  });

  it('refuses to round: a three-decimal currency with two decimals', () => {
    expect(() => formatMinorUnits(1234, 'KWD', 2)).toThrow(RangeError);
  });

  it('knows the minor-unit digits', () => {
    expect([
      minorUnitDigits('EUR'),
      minorUnitDigits('DKK'),
      minorUnitDigits('JPY'),
      minorUnitDigits('BHD'),
    ]).toEqual([2, 2, 0, 3]);
  });
});
