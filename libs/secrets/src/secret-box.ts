import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { SECRETS_KEY_BYTES } from './secrets-key';
import { SealedValueUnreadableError, ValueNotSealedError } from './secrets.errors';

const ALGORITHM = 'aes-256-gcm';
/** 96-bit IVs, random per seal: the size GCM is specified for. */
const IV_BYTES = 12;
const TAG_BYTES = 16;
const PREFIX = 'sealed';
const VERSION = 'v1';
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The shape both the webhook secrets and the idempotency layer's replay bodies are stored through. */
export interface Sealer {
  seal(plaintext: string): string;
  open(stored: string): string;
}

export interface SecretBoxKeys {
  /** Seals every new value; opens values sealed under it. */
  current: Buffer;
  /** During a rotation: still opens values sealed under it, never seals. */
  previous?: Buffer;
}

/** True when `stored` is in the sealed format (of any version or key); it says nothing about whether it opens. */
export function isSealed(stored: string): boolean {
  return stored.startsWith(`${PREFIX}:`);
}

/**
 * The id written into every sealed value: 8 base64url characters (48 bits) of SHA-256 over a
 * fixed label and the key. Tells keys apart so a value sealed under another key fails as
 * "unknown key" instead of "tampered"; reveals nothing usable about the key.
 */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256')
    .update('ledgerkey secrets key id\n')
    .update(key)
    .digest('base64url')
    .slice(0, 8);
}

/**
 * Seals strings for storage: AES-256-GCM under the current key, a random 96-bit IV per value,
 * authenticated (the header `sealed:v1:<key id>` is additional authenticated data). Format:
 *
 *     sealed:v1:<key id>:<iv, base64url>:<ciphertext ‖ 16-byte tag, base64url>
 *
 * Opens values sealed under the current or the previous key. Opening anything else fails
 * with an error saying why; a plaintext value is `ValueNotSealedError`, never passed through.
 */
export class SecretBox implements Sealer {
  private readonly keys = new Map<string, Buffer>();
  private readonly currentKeyId: string;

  /** @throws Error when a key is not 32 bytes, or both keys are the same */
  constructor(keys: SecretBoxKeys) {
    for (const key of [keys.current, keys.previous]) {
      if (key !== undefined && key.length !== SECRETS_KEY_BYTES) {
        throw new Error(`a secrets key is ${SECRETS_KEY_BYTES} bytes, not ${key.length}`);
      }
    }
    this.currentKeyId = keyIdOf(keys.current);
    this.keys.set(this.currentKeyId, Buffer.from(keys.current));
    if (keys.previous !== undefined) {
      const previousId = keyIdOf(keys.previous);
      if (previousId === this.currentKeyId) throw new Error('the previous secrets key is the current one');
      this.keys.set(previousId, Buffer.from(keys.previous));
    }
  }

  /** Every value sealed under the current key starts with this (e.g. for finding those that do not). */
  get currentKeyPrefix(): string {
    return `${this.header(this.currentKeyId)}:`;
  }

  /** True when `stored` is sealed under the current key (it may still be tampered with). */
  isSealedWithCurrentKey(stored: string): boolean {
    return stored.startsWith(this.currentKeyPrefix);
  }

  /**
   * @throws TypeError when the string holds a lone UTF-16 surrogate (UTF-8 cannot carry it:
   *   it would open as U+FFFD, a silently different value)
   */
  seal(plaintext: string): string {
    if (!plaintext.isWellFormed()) throw new TypeError('cannot seal a string with a lone surrogate');
    const header = this.header(this.currentKeyId);
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.keys.get(this.currentKeyId) as Buffer, iv, {
      authTagLength: TAG_BYTES,
    });
    cipher.setAAD(Buffer.from(header, 'utf8'));
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${header}:${iv.toString('base64url')}:${sealed.toString('base64url')}`;
  }

  /**
   * @throws ValueNotSealedError when `stored` is not a sealed value
   * @throws SealedValueUnreadableError when it is sealed but malformed, of another version,
   *   under a key this box does not have, or altered
   */
  open(stored: string): string {
    if (!isSealed(stored)) throw new ValueNotSealedError();
    const parts = stored.split(':');
    if (parts.length !== 5 || parts[1] !== VERSION) {
      throw new SealedValueUnreadableError(
        'malformed',
        `expected "${PREFIX}:${VERSION}:<key id>:<iv>:<data>"`,
      );
    }
    const [, , keyId, ivText, dataText] = parts;
    if (!BASE64URL.test(ivText) || !BASE64URL.test(dataText)) {
      throw new SealedValueUnreadableError('malformed', 'the iv or data is not base64url');
    }
    const iv = Buffer.from(ivText, 'base64url');
    const data = Buffer.from(dataText, 'base64url');
    if (iv.length !== IV_BYTES || data.length < TAG_BYTES) {
      throw new SealedValueUnreadableError('malformed', 'the iv or data has the wrong length');
    }
    const key = this.keys.get(keyId);
    if (key === undefined) {
      throw new SealedValueUnreadableError(
        'unknown_key',
        `it was sealed under key ${keyId}; this process has ${[...this.keys.keys()].join(' and ')} (SECRETS_KEY, SECRETS_KEY_PREVIOUS)`,
      );
    }
    const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(this.header(keyId), 'utf8'));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    try {
      return Buffer.concat([
        decipher.update(data.subarray(0, data.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch (error) {
      throw new SealedValueUnreadableError('tampered', 'authentication failed', { cause: error });
    }
  }

  private header(keyId: string): string {
    return `${PREFIX}:${VERSION}:${keyId}`;
  }
}
