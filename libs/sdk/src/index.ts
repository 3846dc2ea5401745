export { LedgerkeyClient } from './ledgerkey-client.js';
export type { CallOptions, CreateOptions, LedgerkeyClientOptions } from './ledgerkey-client.js';
export type { CreateResult, ListQuery } from './create-result.js';
export { PaymentStillProcessingError } from './payments.js';
export type {
  FinalPayment,
  FinalPaymentResult,
  PaymentListQuery,
  PaymentResult,
  PaymentWaitOptions,
  ProcessingPayment,
  ProcessingPaymentResult,
} from './payments.js';
export type {
  CreditNoteListQuery,
  EventListQuery,
  InvoiceListQuery,
  JournalEntryListQuery,
  PurchaseInvoiceListQuery,
  SettlementListQuery,
} from './ledgerkey-client.js';
export { LedgerkeyApiError, LedgerkeyConnectionError } from './ledgerkey-api-error.js';
export { DEFAULT_RETRY, isRetryableStatus } from './retry-policy.js';
export type { RetryOptions } from './retry-policy.js';
export { WebhookReceiver } from './webhooks/webhook-receiver.js';
export type { WebhookReceiverOptions, WebhookReceipt } from './webhooks/webhook-receiver.js';
export { InMemoryWebhookStore, PostgresWebhookStore } from './webhooks/webhook-stores.js';
export type {
  PgClientLike,
  PgPoolLike,
  PostgresWebhookStoreOptions,
  WebhookDedupStore,
} from './webhooks/webhook-stores.js';
export { WebhookVerificationError, WebhookVerifier } from './webhooks/webhook-verifier.js';
export type {
  VerifiedWebhook,
  WebhookHeaders,
  WebhookVerificationFailure,
  WebhookVerifierOptions,
} from './webhooks/webhook-verifier.js';
export type * from './generated/types.gen.js';
/** The generated operations, one function per operationId (no retries): pass `{ client: ledgerkey.client }`. */
export * as operations from './generated/sdk.gen.js';
