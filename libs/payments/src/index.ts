// Payments (the use cases)
export { PaymentsModule } from './payments.module';
export { CreatePaymentDto } from './create-payment/create-payment.dto';
export {
  CreatePaymentHandler,
  CREATE_PAYMENT_OPERATION,
  providerReferenceOf,
} from './create-payment/create-payment.handler';
export { PaymentQueries } from './payments/payment-queries';
export type { PaymentListFilter } from './payments/payments.repository';
export { PaymentListView, PaymentView, PAYMENT_STATUSES } from './payments/payment.view';
export type { PaymentStatus } from './payments/payment.view';
export { RecoverPaymentsHandler } from './recover-payments/recover-payments.handler';
export type { RecoveryReport } from './recover-payments/recover-payments.handler';
export {
  AmountExceedsOutstandingError,
  InvoiceFullyCreditedError,
  PaymentCurrencyMismatchError,
  PaymentNotFoundError,
  PaymentProviderNotConfiguredError,
} from './payments.errors';
export { NO_OP_PAYMENTS_OBSERVER, PAYMENT_RECOVERY_RESULTS } from './payments.observer';
export type {
  PaymentRecoveryResult,
  PaymentsObserver,
  ProviderCall,
  ProviderCallOutcome,
} from './payments.observer';
export { PAYMENT_PROVIDER } from './payments-options';
export type { PaymentsOptions } from './payments-options';
// Configuration
export { parsePaymentsConfig, PAYMENT_CRASH_POINTS } from './payments-config';
export type { PaymentCrashPoint, PaymentProviderConnection, PaymentsConfig } from './payments-config';
export { preparePaymentProvider } from './sandbox/bundled-provider-sandbox';
export type { PaymentProviderHandle } from './sandbox/bundled-provider-sandbox';
// The provider port and its adapters
export type {
  ChargeOutcome,
  ChargeRequest,
  PaymentProvider,
  ProviderCallOptions,
  ProviderListRange,
  ProviderReadOptions,
  RefundOutcome,
  RefundRequest,
  RejectedOutcome,
  UnknownOutcome,
  UnknownOutcomeReason,
} from './payment-provider';
export type {
  ProviderCharge,
  ProviderChargeEventType,
  ProviderChargeMetadata,
  ProviderChargeStatus,
  ProviderEvent,
  ProviderEventType,
  ProviderPayout,
  ProviderPayoutCharge,
  ProviderRefund,
} from './provider-objects';
export {
  PaymentProviderAmbiguousReferenceError,
  PaymentProviderRequestError,
  PaymentProviderUnavailableError,
} from './payment-provider.errors';
export { SandboxPaymentProvider } from './sandbox/sandbox-payment-provider';
export type { SandboxPaymentProviderOptions } from './sandbox/sandbox-payment-provider';
export { startProviderSandbox } from './sandbox/start-provider-sandbox';
export type {
  ProviderSandboxOptions,
  RunningProviderSandbox,
  SandboxExit,
} from './sandbox/start-provider-sandbox';
