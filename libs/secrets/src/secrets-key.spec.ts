import { randomBytes } from 'node:crypto';
import { parseSecretsKey } from './secrets-key';
import { InvalidSecretsKeyError } from './secrets.errors';

describe('parseSecretsKey', () => {
  const key = randomBytes(32);

  it('reads base64 (openssl rand -base64 32) and unpadded base64url, ignoring surrounding whitespace', () => {
    expect(parseSecretsKey(key.toString('base64'))).toEqual(key);
    expect(parseSecretsKey(`  ${key.toString('base64')}\n`)).toEqual(key);
    expect(parseSecretsKey(key.toString('base64url'))).toEqual(key);
  });

  it.each([
    ['too short', randomBytes(16).toString('base64'), /decodes to 16 bytes/],
    ['too long', randomBytes(33).toString('base64'), /decodes to 33 bytes/],
    ['hex', randomBytes(32).toString('hex'), /decodes to 48 bytes/],
    ['not base64', 'this is not a key!', /not base64/],
    ['empty', '', /not base64/],
  ])('refuses %s with a message that does not repeat the value', (_case, raw, message) => {
    expect(() => parseSecretsKey(raw)).toThrow(InvalidSecretsKeyError);
    expect(() => parseSecretsKey(raw)).toThrow(message);
    try {
      parseSecretsKey(raw);
    } catch (error) {
      if (raw !== '') expect((error as Error).message).not.toContain(raw);
    }
  });
});
