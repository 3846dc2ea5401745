import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { ProviderEventInvalidError, ProviderSignatureInvalidError } from './provider-events.errors';

/**
 * Verifies a provider webhook per Standard Webhooks (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`: HMAC-SHA256 of `id.timestamp.body` with the shared secret), over the exact
 * bytes received; a timestamp more than five minutes away from now is refused (a replayed capture).
 * @throws ProviderSignatureInvalidError
 */
export function verifyProviderSignature(
  secret: string,
  rawBody: Buffer,
  headers: Record<string, string | string[] | undefined>,
): void {
  const get = (name: string): string => {
    const value = headers[name];
    return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
  };
  const signed = {
    'webhook-id': get('webhook-id'),
    'webhook-timestamp': get('webhook-timestamp'),
    'webhook-signature': get('webhook-signature'),
  };
  if (
    signed['webhook-id'] === '' ||
    signed['webhook-timestamp'] === '' ||
    signed['webhook-signature'] === ''
  ) {
    throw new ProviderSignatureInvalidError(
      'webhook-id, webhook-timestamp and webhook-signature are required',
    );
  }
  try {
    new Webhook(secret).verify(rawBody.toString('utf8'), signed);
  } catch (error) {
    if (error instanceof WebhookVerificationError) {
      throw new ProviderSignatureInvalidError(error.message, { cause: error });
    }
    // The signature held but the bytes are not JSON (verify parses them last).
    if (error instanceof SyntaxError) throw new ProviderEventInvalidError('the body is not JSON');
    throw error;
  }
}
