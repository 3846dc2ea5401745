import { InvalidSecretsKeyError } from './secrets.errors';

/** AES-256: a key is exactly 32 bytes. */
export const SECRETS_KEY_BYTES = 32;

/**
 * Parses a key written as base64 (standard alphabet with padding, or base64url without) of
 * exactly 32 bytes, as `openssl rand -base64 32` prints it. Surrounding whitespace is ignored.
 * The message never repeats the value.
 * @throws InvalidSecretsKeyError when it is not base64, or decodes to another length
 */
export function parseSecretsKey(raw: string): Buffer {
  const text = raw.trim();
  // Buffer.from(…, 'base64') skips characters it does not know; check the alphabet first.
  if (!/^(?:[A-Za-z0-9+/]+={0,2}|[A-Za-z0-9_-]+)$/.test(text) || text.length % 4 === 1) {
    throw new InvalidSecretsKeyError(
      'must be base64 of 32 random bytes (e.g. `openssl rand -base64 32`); it is not base64',
    );
  }
  const key = Buffer.from(text, text.includes('-') || text.includes('_') ? 'base64url' : 'base64');
  if (key.length !== SECRETS_KEY_BYTES) {
    throw new InvalidSecretsKeyError(
      `must be base64 of exactly ${SECRETS_KEY_BYTES} bytes (e.g. \`openssl rand -base64 32\`); it decodes to ${key.length} bytes`,
    );
  }
  return key;
}
