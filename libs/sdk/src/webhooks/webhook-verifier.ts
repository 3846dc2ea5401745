/**
 * Verifies ledgerkey's webhook deliveries per the Standard Webhooks specification
 * (https://www.standardwebhooks.com): `webhook-signature` holds one or more `v1,<base64>` HMAC-SHA256
 * signatures of `${webhook-id}.${webhook-timestamp}.${body}` under the endpoint's `whsec_…` secret.
 * WebCrypto only (Node ≥ 20, browsers, edge runtimes): no dependency.
 */

/** Header access as `fetch`'s `Headers` or Node's `IncomingHttpHeaders` (lower-case names) offer it. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export type WebhookVerificationFailure =
  | 'missing_headers'
  | 'invalid_timestamp'
  | 'timestamp_out_of_tolerance'
  | 'invalid_signature'
  | 'invalid_payload';

/** The delivery is not an authentic, fresh ledgerkey webhook: answer 400 and apply nothing. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationFailure,
    message: string,
  ) {
    super(message);
  }
}

export interface VerifiedWebhook {
  /** `webhook-id`: the event id, the same on every attempt — the deduplication key. */
  webhookId: string;
  /** `webhook-timestamp` of this attempt. */
  timestamp: Date;
  /** The body, parsed. */
  payload: unknown;
}

export interface WebhookVerifierOptions {
  /** Largest accepted distance between `webhook-timestamp` and now, seconds. Default 300 (the spec's 5 min). */
  toleranceSeconds?: number;
  /** Milliseconds since the epoch (tests replace it). Default `Date.now`. */
  now?: () => number;
}

const SECRET_PREFIX = 'whsec_';

export class WebhookVerifier {
  private readonly key: ReturnType<typeof globalThis.crypto.subtle.importKey>;
  private readonly toleranceSeconds: number;
  private readonly now: () => number;

  /** @param secret the endpoint's signing secret (`whsec_…`, shown once when it was created) */
  constructor(secret: string, options: WebhookVerifierOptions = {}) {
    const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
    let raw: Uint8Array<ArrayBuffer>;
    try {
      raw = base64Bytes(encoded);
    } catch {
      throw new TypeError('the webhook secret must be whsec_ followed by base64');
    }
    if (raw.length === 0) throw new TypeError('the webhook secret is empty');
    this.key = globalThis.crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, [
      'verify',
    ]);
    this.toleranceSeconds = options.toleranceSeconds ?? 300;
    this.now = options.now ?? Date.now;
  }

  /**
   * @param body the raw request body, exactly as received (not re-serialized JSON)
   * @throws WebhookVerificationError when headers are missing, the timestamp is stale or from the
   *   future beyond the tolerance, no signature matches, or the body is not JSON
   */
  async verify(body: string | Uint8Array, headers: WebhookHeaders): Promise<VerifiedWebhook> {
    const webhookId = headerOf(headers, 'webhook-id');
    const timestampText = headerOf(headers, 'webhook-timestamp');
    const signatures = headerOf(headers, 'webhook-signature');
    if (webhookId === undefined || timestampText === undefined || signatures === undefined) {
      throw new WebhookVerificationError(
        'missing_headers',
        'webhook-id, webhook-timestamp and webhook-signature are required',
      );
    }
    if (!/^\d{1,15}$/.test(timestampText)) {
      throw new WebhookVerificationError('invalid_timestamp', 'webhook-timestamp must be Unix seconds');
    }
    const timestamp = Number(timestampText);
    if (Math.abs(this.now() / 1000 - timestamp) > this.toleranceSeconds) {
      // A replay of an old capture, or a clock far off: refused before any HMAC work.
      throw new WebhookVerificationError(
        'timestamp_out_of_tolerance',
        'webhook-timestamp is too old or too new',
      );
    }
    const bodyBytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
    const signed = concat(new TextEncoder().encode(`${webhookId}.${timestampText}.`), bodyBytes);
    const key = await this.key;
    let valid = false;
    for (const candidate of signatures.split(' ')) {
      const [version, signature] = candidate.split(',', 2);
      if (version !== 'v1' || signature === undefined) continue;
      let bytes: Uint8Array<ArrayBuffer>;
      try {
        bytes = base64Bytes(signature);
      } catch {
        continue;
      }
      // crypto.subtle.verify compares in constant time.
      if (await globalThis.crypto.subtle.verify('HMAC', key, bytes, signed)) {
        valid = true;
        break;
      }
    }
    if (!valid)
      throw new WebhookVerificationError('invalid_signature', 'no webhook-signature matches the body');
    let payload: unknown;
    try {
      payload = JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body));
    } catch {
      throw new WebhookVerificationError('invalid_payload', 'the body is not JSON');
    }
    return { webhookId, timestamp: new Date(timestamp * 1000), payload };
  }
}

function headerOf(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(value) ? value[0] : value;
}

function base64Bytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a, 0);
  joined.set(b, a.length);
  return joined;
}
