import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** Random bytes behind a signing secret: 256 bits, above the spec's 24-byte minimum. */
const SECRET_BYTES = 32;

/** A new Standard Webhooks signing secret, `whsec_<base64>`. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** The headers of one signed delivery, per the Standard Webhooks specification. */
export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Signs a delivery body. `messageId` is the event id: stable across attempts, so receivers
 * deduplicate retries by it; the timestamp is the attempt's own (receivers reject stale ones).
 */
export function signWebhook(secret: string, messageId: string, body: string, at: Date): SignedHeaders {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(messageId, at, body),
  };
}
