import { createHash, randomBytes } from 'node:crypto';

const API_KEY_PREFIX = 'lk_';

/** What a key may do: `read_write` everything, `read_only` the GET routes only. */
export const API_KEY_SCOPES = ['read_write', 'read_only'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** A new API key: 256 random bits, shown to the caller once. */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** What is stored and looked up: SHA-256 of the key (high-entropy keys need no slow hash). */
export function hashApiKey(apiKey: string): Buffer {
  return createHash('sha256').update(apiKey, 'utf8').digest();
}

/** Enough of the key to recognise it in a list, never enough to use it. */
export function apiKeyPrefix(apiKey: string): string {
  return apiKey.slice(0, API_KEY_PREFIX.length + 6);
}
