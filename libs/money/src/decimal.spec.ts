import {
  compareDecimal,
  formatDecimal,
  multiplyToMinorUnits,
  normalizeDecimal,
  parseDecimal,
  percentOf,
} from './decimal';

function dec(text: string, maxScale = 10) {
  const value = parseDecimal(text, maxScale);
  if (value === null) {
    throw new Error(`test fixture does not parse: ${text}`);
  }
  return value;
}

describe('parseDecimal', () => {
  it.each([
    ['', 4],
    ['-1', 4],
    ['1e3', 4],
    [' 1', 4],
    ['1 ', 4],
    ['1.', 4],
    ['.5', 4],
    ['1.23456', 4],
    ['+1', 4],
    ['0x10', 4],
    ['１', 4],
    ['1,5', 4],
    ['1.2.3', 4],
    ['NaN', 4],
    ['Infinity', 4],
    ['5.1', 0],
  ])('rejects %j with maxScale %d', (text, maxScale) => {
    expect(parseDecimal(text, maxScale)).toBeNull();
  });

  it('accepts "1.23450" with maxScale 4 by stripping the trailing zero', () => {
    expect(parseDecimal('1.23450', 4)).toEqual({ units: 12345n, scale: 4 });
  });

  it.each([
    ['2', { units: 2n, scale: 0 }],
    ['2.0', { units: 2n, scale: 0 }],
    ['2.5', { units: 25n, scale: 1 }],
    ['02.50', { units: 25n, scale: 1 }],
    ['0.0001', { units: 1n, scale: 4 }],
    ['0', { units: 0n, scale: 0 }],
    ['1000', { units: 1000n, scale: 0 }],
  ])('parses %j', (text, expected) => {
    expect(parseDecimal(text, 4)).toEqual(expected);
  });

  it('strips trailing zeros before checking maxScale 0', () => {
    expect(parseDecimal('7.0000', 0)).toEqual({ units: 7n, scale: 0 });
  });

  it('accepts 40 characters and rejects 41', () => {
    expect(parseDecimal('9'.repeat(40), 0)).toEqual({ units: 10n ** 40n - 1n, scale: 0 });
    expect(parseDecimal('9'.repeat(41), 0)).toBeNull();
    expect(parseDecimal(`1.${'0'.repeat(39)}`, 0)).toBeNull();
  });

  it('throws RangeError for an invalid maxScale', () => {
    expect(() => parseDecimal('1', -1)).toThrow(RangeError);
    expect(() => parseDecimal('1', 1.5)).toThrow(RangeError);
  });
});

describe('formatDecimal / normalizeDecimal', () => {
  it.each([
    ['2.50', '2.5'],
    ['2.0', '2'],
    ['002', '2'],
    ['0.10', '0.1'],
    ['0', '0'],
    ['000.000', '0'],
    ['1000', '1000'],
    ['0.0001', '0.0001'],
    ['021.00', '21'],
  ])('normalizes %j to %j', (text, expected) => {
    expect(normalizeDecimal(text, 4)).toBe(expected);
  });

  it('returns null for text parseDecimal rejects', () => {
    expect(normalizeDecimal('1.23456', 4)).toBeNull();
    expect(normalizeDecimal('.5', 4)).toBeNull();
  });

  it('formats values with redundant scale canonically', () => {
    expect(formatDecimal({ units: 250n, scale: 2 })).toBe('2.5');
    expect(formatDecimal({ units: 5n, scale: 3 })).toBe('0.005');
    expect(formatDecimal({ units: 0n, scale: 3 })).toBe('0');
    expect(formatDecimal({ units: 1200n, scale: 0 })).toBe('1200');
    expect(formatDecimal({ units: 123456n, scale: 2 })).toBe('1234.56');
    expect(formatDecimal({ units: -5n, scale: 1 })).toBe('-0.5');
  });
});

describe('compareDecimal', () => {
  it.each([
    ['21', '21.00', 0],
    ['5.5', '21', -1],
    ['10', '9', 1],
    ['0.1', '0.09', 1],
    ['0', '0.0001', -1],
    ['100', '99.99', 1],
  ])('compares %j with %j as %d', (a, b, expected) => {
    expect(compareDecimal(dec(a), dec(b))).toBe(expected);
  });
});

describe('multiplyToMinorUnits', () => {
  it.each([
    ['0.5', 1n, 1n],
    ['1.5', 1n, 2n],
    ['2.5', 1n, 3n],
    ['0.25', 3n, 1n],
    ['0.0001', 4999n, 0n],
    ['0.0001', 5000n, 1n],
    ['0.0001', 15000n, 2n],
    ['0.4999', 1n, 0n],
    ['1.005', 100n, 101n],
    ['2', 1234n, 2468n],
    ['3', 0n, 0n],
  ])('%s × %d = %d', (quantity, unitPrice, expected) => {
    expect(multiplyToMinorUnits(dec(quantity), unitPrice)).toBe(expected);
  });

  it('is exact beyond floating-point precision', () => {
    expect(multiplyToMinorUnits(dec('1234.5678'), 1_000_000_000_001n)).toBe(1234567800001235n);
    expect(multiplyToMinorUnits(dec('9999.9999'), 1_000_000_000_000n)).toBe(9999999900000000n);
  });
});

describe('percentOf', () => {
  it.each([
    [100n, '21', 21n],
    [3n, '21', 1n],
    [1n, '21', 0n],
    [150n, '1', 2n],
    [250n, '1', 3n],
    [149n, '1', 1n],
    [10n, '5.5', 1n],
    [9n, '5.5', 0n],
    [1000n, '1.15', 12n],
    [12345n, '0', 0n],
    [12345n, '100', 12345n],
    [-50n, '1', -1n],
    [-150n, '1', -2n],
    [-49n, '1', 0n],
    [-10n, '5.5', -1n],
  ])('%d × %s%% = %d', (amount, rate, expected) => {
    expect(percentOf(amount, dec(rate))).toBe(expected);
  });
});
