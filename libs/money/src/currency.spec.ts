import { isMoneyCurrency } from './currency';

describe('isMoneyCurrency', () => {
  it.each(['EUR', 'USD', 'JPY', 'BHD', 'GBP'])('accepts %s', (code) => {
    expect(isMoneyCurrency(code)).toBe(true);
  });

  it.each(['XXX', 'XTS', 'XAU', 'XDR', 'eur', 'EURO', 'ABC', '', 978, null])('rejects %p', (code) => {
    expect(isMoneyCurrency(code)).toBe(false);
  });
});
