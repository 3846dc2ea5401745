/** Refusals of the provider-event receiver. Each has a stable `code`; none of them stored anything. */

/** The webhook's Standard Webhooks signature is missing, wrong, or its timestamp is stale. */
export class ProviderSignatureInvalidError extends Error {
  readonly code = 'provider_signature_invalid';
  constructor(reason: string, options?: { cause: unknown }) {
    super(`The webhook signature could not be verified (${reason}); nothing was recorded.`, options);
  }
}

/** The signed body is not a provider event of the documented shape. */
export class ProviderEventInvalidError extends Error {
  readonly code = 'provider_event_invalid';
  constructor(problem: string) {
    super(`The provider event is malformed: ${problem}. Nothing was recorded.`);
  }
}

/**
 * A well-formed, signed event of a type ledgerkey does not handle: refused (not recorded), so the
 * provider keeps it and redelivers it — applied once a version of ledgerkey knows the type.
 */
export class ProviderEventTypeUnknownError extends Error {
  readonly code = 'provider_event_type_unknown';
  constructor(type: string) {
    super(
      `Events of type "${type}" are not handled (charge.succeeded, charge.failed, charge.refunded, payout.paid); nothing was recorded.`,
    );
  }
}

/** `{provider}` names no provider this server is configured with. */
export class ProviderUnknownError extends Error {
  readonly code = 'not_found';
  constructor(provider: string) {
    super(`No payment provider "${provider}" is configured on this server.`);
  }
}

/** No webhook secret is configured: no event can be verified, so none is accepted. */
export class ProviderWebhookSecretMissingError extends Error {
  readonly code = 'payment_provider_unavailable';
  readonly retryAfterSeconds = 60;
  constructor() {
    super(
      'No PAYMENT_PROVIDER_WEBHOOK_SECRET is configured: provider events cannot be verified; nothing was recorded.',
    );
  }
}
