/** Failures of opening a stored value. Each has a stable `code`; none is a client's mistake. */

/**
 * The value handed to `open` is not a sealed value at all (e.g. a plaintext secret written
 * before sealing existed). A caller that expects legacy plaintext checks `isSealed` first.
 */
export class ValueNotSealedError extends Error {
  readonly code = 'value_not_sealed';
  constructor() {
    super('The stored value is not sealed (expected "sealed:v1:…").');
  }
}

/** Why a sealed value could not be opened. */
export type UnreadableReason =
  /** Sealed under a key that is neither the current nor the previous key. */
  | 'unknown_key'
  /** The authentication tag does not match: altered, truncated, or another key with a colliding id. */
  | 'tampered'
  /** Not in the sealed format this version reads. */
  | 'malformed';

/**
 * A sealed value that cannot be opened with the keys this process has. Its plaintext is lost
 * to this process: never retried, never guessed.
 */
export class SealedValueUnreadableError extends Error {
  readonly code = 'sealed_value_unreadable';
  constructor(
    readonly reason: UnreadableReason,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`The sealed value cannot be opened: ${detail}.`, options);
  }
}

/** SECRETS_KEY / SECRETS_KEY_PREVIOUS / the key file do not hold a usable key. */
export class InvalidSecretsKeyError extends Error {
  readonly code = 'secrets_key_invalid';
}
