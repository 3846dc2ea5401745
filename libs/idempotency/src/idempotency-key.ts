import { IdempotencyKeyInvalidError, IdempotencyKeyMissingError } from './idempotency.errors';

export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/** Visible ASCII: 0x21 ('!') to 0x7E ('~'); no spaces, no control or non-ASCII characters. */
const VISIBLE_ASCII = /^[\x21-\x7E]+$/;

/**
 * Reads the `Idempotency-Key` header. The value may be bare (`abc`, as Stripe clients send
 * it) or an RFC 8941 Structured Field string (`"abc"`, as the IETF draft writes it); both
 * name the same key.
 * @throws IdempotencyKeyMissingError when the header is absent
 * @throws IdempotencyKeyInvalidError when it is repeated, empty, too long or not visible ASCII
 */
export function parseIdempotencyKey(header: string | string[] | undefined): string {
  if (header === undefined) throw new IdempotencyKeyMissingError();
  if (Array.isArray(header)) {
    throw new IdempotencyKeyInvalidError('send the header once');
  }
  const key = header.startsWith('"') ? unquoteStructuredString(header) : header;
  if (key.length === 0) throw new IdempotencyKeyInvalidError('it is empty');
  if (key.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
    throw new IdempotencyKeyInvalidError(`it is longer than ${IDEMPOTENCY_KEY_MAX_LENGTH} characters`);
  }
  if (!VISIBLE_ASCII.test(key)) {
    throw new IdempotencyKeyInvalidError('only visible ASCII characters (no spaces) are allowed');
  }
  return key;
}

/** RFC 8941 §3.3.3 sf-string: `"` chars `"`, with `\"` and `\\` the only escapes. */
function unquoteStructuredString(value: string): string {
  if (value.length < 2 || !value.endsWith('"')) {
    throw new IdempotencyKeyInvalidError('a quoted key must end with a double quote');
  }
  let key = '';
  for (let i = 1; i < value.length - 1; i += 1) {
    const char = value[i];
    if (char === '\\') {
      const next = value[i + 1];
      if ((next !== '"' && next !== '\\') || i + 1 === value.length - 1) {
        throw new IdempotencyKeyInvalidError('a quoted key allows only \\" and \\\\ escapes');
      }
      key += next;
      i += 1;
    } else if (char === '"') {
      throw new IdempotencyKeyInvalidError('a quoted key must escape inner double quotes');
    } else {
      key += char;
    }
  }
  return key;
}
