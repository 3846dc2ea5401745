import { createHash } from 'node:crypto';
import { fingerprintOf } from './fingerprint';

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

const invoice = {
  orderId: 'order-1041',
  currency: 'EUR',
  customer: { name: 'UAB Pirkėjas', countryCode: 'LT' },
  lines: [
    { description: 'Consulting', quantity: '2', unitPrice: 5000, vatRate: '21' },
    { description: 'Travel', quantity: '1', unitPrice: 1200, vatRate: '0' },
  ],
};

describe('fingerprintOf', () => {
  it('returns a 32-byte Buffer', () => {
    const fingerprint = fingerprintOf(invoice);
    expect(Buffer.isBuffer(fingerprint)).toBe(true);
    expect(fingerprint).toHaveLength(32);
  });

  it('is the SHA-256 of the RFC 8785 canonical JSON (sorted keys, no whitespace)', () => {
    expect(fingerprintOf({ b: [1, 'x'], a: { d: true, c: null } })).toEqual(
      sha256('{"a":{"c":null,"d":true},"b":[1,"x"]}'),
    );
  });

  it('is deterministic', () => {
    expect(fingerprintOf(invoice)).toEqual(fingerprintOf(structuredClone(invoice)));
  });

  it('ignores key order, at every level', () => {
    const reordered = {
      lines: [
        { vatRate: '21', unitPrice: 5000, quantity: '2', description: 'Consulting' },
        { unitPrice: 1200, vatRate: '0', description: 'Travel', quantity: '1' },
      ],
      customer: { countryCode: 'LT', name: 'UAB Pirkėjas' },
      currency: 'EUR',
      orderId: 'order-1041',
    };
    expect(fingerprintOf(reordered)).toEqual(fingerprintOf(invoice));
  });

  it('ignores whitespace and number spelling of equivalent JSON texts', () => {
    const compact = JSON.parse('{"a":100,"b":[1.5,2],"c":{"d":"x y"}}') as unknown;
    const spaced = JSON.parse('{ "c" : { "d" : "x y" } ,\n\t"b": [ 1.50 , 2.0 ],  "a": 1e2 }') as unknown;
    expect(fingerprintOf(spaced)).toEqual(fingerprintOf(compact));
  });

  it('drops undefined members, as JSON does', () => {
    expect(fingerprintOf({ a: 1, b: undefined })).toEqual(fingerprintOf({ a: 1 }));
    expect(fingerprintOf({ a: { b: undefined, c: 2 } })).toEqual(fingerprintOf({ a: { c: 2 } }));
  });

  it('keeps null members: null and absent are different payloads', () => {
    expect(fingerprintOf({ a: 1, b: null })).not.toEqual(fingerprintOf({ a: 1 }));
  });

  it('treats an absent payload as JSON null', () => {
    expect(fingerprintOf(undefined)).toEqual(sha256('null'));
    expect(fingerprintOf(null)).toEqual(sha256('null'));
  });

  it('sees only the JSON representation of class instances (methods are not data)', () => {
    class Payload {
      constructor(
        readonly a: number,
        readonly b: string,
      ) {}

      describe(): string {
        return `${this.a}${this.b}`;
      }
    }
    expect(fingerprintOf(new Payload(1, 'x'))).toEqual(fingerprintOf({ b: 'x', a: 1 }));
  });

  it.each([
    ['a different amount', { lines: [{ ...invoice.lines[0], unitPrice: 5001 }, invoice.lines[1]] }],
    ['a different currency', { currency: 'USD' }],
    ['a different customer name', { customer: { ...invoice.customer, name: 'UAB Kitas' } }],
    ['a different order id', { orderId: 'order-1042' }],
    ['no order id', { orderId: undefined }],
    ['a null order id', { orderId: null }],
    ['one more line', { lines: [...invoice.lines, invoice.lines[0]] }],
    ['one line less', { lines: [invoice.lines[0]] }],
    ['a number sent as a string', { lines: [{ ...invoice.lines[0], unitPrice: '5000' }, invoice.lines[1]] }],
    ['an extra member', { notes: 'x' }],
  ])('differs for %s', (_name, change) => {
    expect(fingerprintOf({ ...invoice, ...change })).not.toEqual(fingerprintOf(invoice));
  });

  it('differs when array order differs, at any depth', () => {
    expect(fingerprintOf({ lines: [1, 2] })).not.toEqual(fingerprintOf({ lines: [2, 1] }));
    expect(fingerprintOf({ ...invoice, lines: [invoice.lines[1], invoice.lines[0]] })).not.toEqual(
      fingerprintOf(invoice),
    );
    expect(fingerprintOf({ a: [[1, 2], [3]] })).not.toEqual(fingerprintOf({ a: [[2, 1], [3]] }));
    expect(fingerprintOf({ a: [[1, 2], [3]] })).not.toEqual(fingerprintOf({ a: [[3], [1, 2]] }));
  });

  it('throws on a payload with no JSON representation', () => {
    expect(() => fingerprintOf(() => 1)).toThrow(Error);
    expect(() => fingerprintOf({ amount: 1n })).toThrow(TypeError);
  });
});
