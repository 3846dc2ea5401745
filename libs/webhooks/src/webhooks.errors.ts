/** Business outcomes of webhook use cases. Each has a stable `code`. */

export class WebhookEndpointNotFoundError extends Error {
  readonly code = 'not_found';
  constructor(endpointId: string) {
    super(`No webhook endpoint ${endpointId} exists.`);
  }
}

/**
 * The URL is well formed but its target is not allowed: not public (loopback, private,
 * link-local, …) unless WEBHOOK_ALLOW_PRIVATE_TARGETS is on. Raised while executing the
 * create, so it is stored and replayed under the Idempotency-Key like other rejections.
 */
export class WebhookUrlForbiddenError extends Error {
  readonly code = 'webhook_url_forbidden';
  readonly errors: Array<{ field: string; message: string }>;
  constructor(reason: string, options?: { cause?: unknown }) {
    super(`The webhook url is not allowed: ${reason}.`, options);
    this.errors = [{ field: 'url', message: reason }];
  }
}
