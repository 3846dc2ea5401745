import { randomBytes } from 'node:crypto';
import { isSealed, keyIdOf, SecretBox } from './secret-box';
import { SealedValueUnreadableError, ValueNotSealedError } from './secrets.errors';

const keyA = Buffer.alloc(32, 0xa1);
const keyB = Buffer.alloc(32, 0xb2);
const SEALED_V1 = /^sealed:v1:([A-Za-z0-9_-]{8}):([A-Za-z0-9_-]{16}):([A-Za-z0-9_-]{22,})$/;

function unreadable(action: () => unknown): SealedValueUnreadableError {
  try {
    action();
  } catch (error) {
    if (error instanceof SealedValueUnreadableError) return error;
    throw error;
  }
  throw new Error('expected SealedValueUnreadableError, nothing was thrown');
}

/** Replaces one character of the base64url part at `index` with another valid one. */
function flip(text: string, index: number): string {
  const replacement = text[index] === 'A' ? 'B' : 'A';
  return text.slice(0, index) + replacement + text.slice(index + 1);
}

describe('SecretBox', () => {
  const box = new SecretBox({ current: keyA });

  it('round-trips any well-formed string, including empty, non-ASCII and long ones', () => {
    for (const plaintext of [
      '',
      'whsec_' + randomBytes(32).toString('base64'),
      '{"secret":"ä€😀\\u0000"}',
      'x'.repeat(100_000),
    ]) {
      expect(box.open(box.seal(plaintext))).toBe(plaintext);
    }
  });

  it('writes the versioned, self-describing format with the key id, a fresh IV per seal and no plaintext', () => {
    const secret = 'whsec_' + randomBytes(32).toString('base64');
    const first = box.seal(secret);
    const second = box.seal(secret);
    const [, keyId, iv, data] = SEALED_V1.exec(first) ?? [];
    expect(keyId).toBe(keyIdOf(keyA));
    expect(Buffer.from(iv, 'base64url')).toHaveLength(12);
    // Ciphertext as long as the plaintext, plus the 16-byte tag.
    expect(Buffer.from(data, 'base64url')).toHaveLength(Buffer.byteLength(secret) + 16);
    expect(second).not.toBe(first);
    expect(SEALED_V1.exec(second)?.[2]).not.toBe(iv);
    expect(first).not.toContain('whsec_');
    expect(first).not.toContain(secret.slice(6, 18));
    expect(isSealed(first)).toBe(true);
    expect(box.isSealedWithCurrentKey(first)).toBe(true);
    expect(first.startsWith(box.currentKeyPrefix)).toBe(true);
  });

  it('key ids are short, stable, and differ between keys', () => {
    expect(keyIdOf(keyA)).toMatch(/^[A-Za-z0-9_-]{8}$/);
    expect(keyIdOf(Buffer.from(keyA))).toBe(keyIdOf(keyA));
    expect(keyIdOf(keyB)).not.toBe(keyIdOf(keyA));
  });

  it('refuses to open a value that is not sealed (legacy plaintext is the caller’s decision)', () => {
    expect(isSealed('whsec_abc')).toBe(false);
    expect(() => box.open('whsec_' + 'A'.repeat(43) + '=')).toThrow(ValueNotSealedError);
    expect(() => box.open('{"id":"x"}')).toThrow(ValueNotSealedError);
    expect(() => box.open('')).toThrow(ValueNotSealedError);
  });

  it('detects tampering with the ciphertext, the tag, the IV or the header', () => {
    const sealed = box.seal('whsec_' + randomBytes(32).toString('base64'));
    const [header, version, keyId, iv, data] = sealed.split(':');
    const tampered = [
      [header, version, keyId, iv, flip(data, 0)].join(':'), // ciphertext
      [header, version, keyId, iv, flip(data, data.length - 2)].join(':'), // tag
      [header, version, keyId, flip(iv, 3), data].join(':'), // IV
      [header, version, keyId, iv, data.slice(0, -4)].join(':'), // truncated
    ];
    for (const value of tampered) expect(unreadable(() => box.open(value)).reason).toBe('tampered');
  });

  it('fails clearly on a value sealed under another key: unknown key, naming both ids', () => {
    const sealedUnderB = new SecretBox({ current: keyB }).seal('whsec_x');
    const error = unreadable(() => box.open(sealedUnderB));
    expect(error.reason).toBe('unknown_key');
    expect(error.code).toBe('sealed_value_unreadable');
    expect(error.message).toContain(keyIdOf(keyB));
    expect(error.message).toContain(keyIdOf(keyA));
    // A forged key id pointing at the right key still fails authentication (the header is AAD).
    const relabelled = sealedUnderB.replace(keyIdOf(keyB), keyIdOf(keyA));
    expect(unreadable(() => box.open(relabelled)).reason).toBe('tampered');
  });

  it('rejects malformed sealed values and other versions', () => {
    const sealed = box.seal('x');
    for (const value of [
      'sealed:',
      'sealed:v2:' + sealed.slice('sealed:v1:'.length),
      sealed + ':extra',
      sealed.replace(/:([^:]+)$/, ':not base64!'),
      sealed.replace(/^(sealed:v1:[^:]+:)[^:]+/, '$1AAAA'),
      `sealed:v1:${keyIdOf(keyA)}:${'A'.repeat(16)}:AAAA`,
    ]) {
      expect(unreadable(() => box.open(value)).reason).toBe('malformed');
    }
  });

  it('rotation: opens values of the current and the previous key, seals with the current one', () => {
    const old = new SecretBox({ current: keyA });
    const sealedBefore = old.seal('before the rotation');
    const rotated = new SecretBox({ current: keyB, previous: keyA });
    expect(rotated.open(sealedBefore)).toBe('before the rotation');
    expect(rotated.isSealedWithCurrentKey(sealedBefore)).toBe(false);
    const sealedAfter = rotated.seal('after the rotation');
    expect(sealedAfter.split(':')[2]).toBe(keyIdOf(keyB));
    expect(rotated.isSealedWithCurrentKey(sealedAfter)).toBe(true);
    // The old key alone cannot read what the new one sealed; once the previous key is dropped,
    // what only it sealed is unreadable.
    expect(unreadable(() => old.open(sealedAfter)).reason).toBe('unknown_key');
    expect(unreadable(() => new SecretBox({ current: keyB }).open(sealedBefore)).reason).toBe('unknown_key');
  });

  it('refuses keys of the wrong size, the same key twice, and strings UTF-8 cannot carry', () => {
    expect(() => new SecretBox({ current: Buffer.alloc(16) })).toThrow(/32 bytes/);
    expect(() => new SecretBox({ current: keyA, previous: Buffer.alloc(31) })).toThrow(/32 bytes/);
    expect(() => new SecretBox({ current: keyA, previous: Buffer.from(keyA) })).toThrow(/previous/);
    expect(() => box.seal('lone \ud800 surrogate')).toThrow(TypeError);
  });
});
