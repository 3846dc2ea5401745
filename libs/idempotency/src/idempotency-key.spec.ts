import { IDEMPOTENCY_KEY_MAX_LENGTH, parseIdempotencyKey } from './idempotency-key';
import { IdempotencyKeyInvalidError, IdempotencyKeyMissingError } from './idempotency.errors';

function parseError(header: string | string[] | undefined): unknown {
  try {
    parseIdempotencyKey(header);
  } catch (error) {
    return error;
  }
  throw new Error(`expected ${JSON.stringify(header)} to be refused`);
}

function expectInvalid(header: string | string[]): void {
  const error = parseError(header);
  expect(error).toBeInstanceOf(IdempotencyKeyInvalidError);
  expect((error as IdempotencyKeyInvalidError).code).toBe('idempotency_key_invalid');
}

describe('parseIdempotencyKey', () => {
  it('allows keys of at most 255 characters', () => {
    expect(IDEMPOTENCY_KEY_MAX_LENGTH).toBe(255);
  });

  describe('accepts', () => {
    it.each([
      ['a UUID', '0b4e8d5c-6f0a-4d0e-9a55-1c2f3e4d5a6b'],
      ['a domain key', 'order-1041-invoice'],
      ['a single character', 'x'],
      ['every visible ASCII punctuation mark', "!#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"],
      ['a bare key containing a double quote after the first character', 'ab"c'],
    ])('%s, bare, as is', (_name, header) => {
      expect(parseIdempotencyKey(header)).toBe(header);
    });

    it('a quoted Structured Field string as the same key as the bare value', () => {
      expect(parseIdempotencyKey('"order-1041-invoice"')).toBe('order-1041-invoice');
      expect(parseIdempotencyKey('"order-1041-invoice"')).toBe(parseIdempotencyKey('order-1041-invoice'));
    });

    it('the \\" escape inside a quoted key', () => {
      expect(parseIdempotencyKey('"a\\"b"')).toBe('a"b');
    });

    it('the \\\\ escape inside a quoted key', () => {
      expect(parseIdempotencyKey('"a\\\\b"')).toBe('a\\b');
    });

    it('a quoted key that is only escapes', () => {
      expect(parseIdempotencyKey('"\\"\\\\"')).toBe('"\\');
    });

    it('exactly 255 characters', () => {
      const key = 'k'.repeat(255);
      expect(parseIdempotencyKey(key)).toBe(key);
    });

    it('a quoted key whose unquoted value is 255 characters (the limit applies to the key, not the header)', () => {
      const key = 'k'.repeat(255);
      expect(parseIdempotencyKey(`"${key}"`)).toBe(key);
    });
  });

  describe('refuses as missing', () => {
    it('an absent header', () => {
      const error = parseError(undefined);
      expect(error).toBeInstanceOf(IdempotencyKeyMissingError);
      expect(error).not.toBeInstanceOf(IdempotencyKeyInvalidError);
      expect((error as IdempotencyKeyMissingError).code).toBe('idempotency_key_missing');
      expect((error as Error).message).toBe('The Idempotency-Key header is required for this operation.');
    });
  });

  describe('refuses as invalid', () => {
    it.each([
      ['an empty value', ''],
      ['an empty quoted string', '""'],
      ['256 characters', 'k'.repeat(256)],
      ['a quoted key of 256 characters', `"${'k'.repeat(256)}"`],
      ['a space inside', 'order 1041'],
      ['a leading space', ' abc'],
      ['a tab inside', 'order\t1041'],
      ['a non-ASCII letter', 'rėkinys'],
      ['"é"', 'é'],
      ['an emoji', 'key-🔑'],
      ['a DEL character', 'abc\x7f'],
      ['a NUL character', 'abc\x00'],
      ['a line feed', 'abc\ndef'],
      ['a space inside a quoted key', '"order 1041"'],
      ['a non-ASCII letter inside a quoted key', '"é"'],
    ])('%s', (_name, header) => {
      expectInvalid(header);
    });

    it.each([
      ['a lone opening quote', '"'],
      ['an unterminated quoted key', '"abc'],
      ['an unescaped double quote inside', '"a"b"'],
      ['an escape other than \\" and \\\\', '"a\\nb"'],
      ['a backslash escaping the closing quote', '"abc\\"'],
      ['a lone trailing backslash before the closing quote', '"\\"'],
    ])('bad quoting: %s', (_name, header) => {
      expectInvalid(header);
    });

    it('a repeated header (array value)', () => {
      expectInvalid(['abc', 'abc']);
    });

    it('a repeated header even with a single element', () => {
      expectInvalid(['abc']);
    });

    it('with a message that names the reason', () => {
      expect((parseError('k'.repeat(256)) as Error).message).toMatch(/longer than 255 characters/);
      expect((parseError('') as Error).message).toMatch(/empty/);
      expect((parseError('a b') as Error).message).toMatch(/visible ASCII/);
    });
  });
});
