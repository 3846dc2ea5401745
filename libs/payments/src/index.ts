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
