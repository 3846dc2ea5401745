import type { SecretBox } from '@ledgerkey/secrets';

/**
 * A signing secret as `webhook_endpoints.secret` holds it: sealed (`sealed:v1:…`), or — for an
 * endpoint registered before secrets were sealed, until the boot step seals it — `whsec_…` in
 * clear (`ck_webhook_endpoints_secret` allows exactly these two forms).
 */
export function isPlaintextSecret(stored: string): boolean {
  return stored.startsWith('whsec_');
}

/**
 * The signing secret of a stored value. Legacy plaintext is accepted on purpose: rows written
 * before the upgrade (or by a process of the previous version during a rolling upgrade) stay
 * deliverable until `SealStoredSecretsHandler` seals them.
 * @throws SealedValueUnreadableError when it is sealed under a key this process does not have
 */
export function openStoredSecret(box: SecretBox, stored: string): string {
  return isPlaintextSecret(stored) ? stored : box.open(stored);
}
