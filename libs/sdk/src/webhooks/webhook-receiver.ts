import type { EventView } from '../generated/types.gen.js';
import type { WebhookDedupStore } from './webhook-stores.js';
import {
  type WebhookHeaders,
  WebhookVerificationError,
  WebhookVerifier,
  type WebhookVerifierOptions,
} from './webhook-verifier.js';

export interface WebhookReceiverOptions<Tx> extends WebhookVerifierOptions {
  /** The endpoint's signing secret (`whsec_…`). */
  secret: string;
  /** Where applied webhook ids are remembered, with the effect. */
  store: WebhookDedupStore<Tx>;
}

export type WebhookReceipt<R> =
  | { status: 'applied'; event: EventView; result: R }
  /** Already applied (delivery is at least once): nothing ran. Answer 2xx so ledgerkey stops retrying. */
  | { status: 'duplicate'; event: EventView };

/**
 * The receiving side of ledgerkey's webhooks: verifies the Standard Webhooks signature and
 * timestamp, then runs your handler once per `webhook-id` (the event id) through the store — with
 * the PostgreSQL store, inside the transaction that records the id.
 *
 * Map the outcome to HTTP: a receipt (applied or duplicate) → `200`; a
 * {@link WebhookVerificationError} → `400` (not retried usefully); anything else your handler
 * throws → `500`, and ledgerkey retries later with the same `webhook-id`.
 */
export class WebhookReceiver<Tx> {
  private readonly verifier: WebhookVerifier;
  private readonly store: WebhookDedupStore<Tx>;

  constructor(options: WebhookReceiverOptions<Tx>) {
    this.verifier = new WebhookVerifier(options.secret, options);
    this.store = options.store;
  }

  /**
   * @param body the raw body as received
   * @throws WebhookVerificationError for an unsigned, forged, stale or malformed delivery (nothing runs)
   * @throws what `handler` throws (the id stays unrecorded, so a retry applies it)
   */
  async receive<R>(
    body: string | Uint8Array,
    headers: WebhookHeaders,
    handler: (event: EventView, tx: Tx) => Promise<R>,
  ): Promise<WebhookReceipt<R>> {
    const verified = await this.verifier.verify(body, headers);
    const event = verified.payload as EventView;
    if (typeof event !== 'object' || event === null || typeof event.type !== 'string') {
      throw new WebhookVerificationError('invalid_payload', 'the body is not a ledgerkey event');
    }
    const outcome = await this.store.once(verified.webhookId, (tx) => handler(event, tx));
    return outcome.duplicate
      ? { status: 'duplicate', event }
      : { status: 'applied', event, result: outcome.result };
  }
}
