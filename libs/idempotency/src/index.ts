// The protocol (framework-free)
export { IdempotencyProtocol } from './idempotency-protocol';
export type { IdempotencyProtocolOptions } from './idempotency-protocol';
export { IdempotentExecutor, JSON_CONTENT_TYPE, PENDING_STATUS } from './idempotent-executor';
export { UnkeyedExecutor } from './unkeyed-executor';
export { CachedReplays } from './cached-replays';
export type {
  ExternalCall,
  IdempotentAnswer,
  IdempotentCall,
  IdempotentOperation,
  KnownRequest,
} from './idempotent-executor';
export { RecoveryPoints } from './external-effect';
export type {
  EffectAttempt,
  EffectResult,
  ExternalEffect,
  ResumeResult,
  StalledOperation,
  StalledOperationsQuery,
} from './external-effect';
export { ReplayCache } from './replay-cache';
export type { ReplayCacheLimits } from './replay-cache';
export { decide } from './idempotency-state-machine';
export type { KeyDecision } from './idempotency-state-machine';
export { IDEMPOTENCY_RECORD_STATES, OPERATOR_TENANT_ID } from './idempotency-record';
export type {
  CompletedRecord,
  FailedFinalRecord,
  FailedRetryableRecord,
  FinishedRecord,
  IdempotencyKeyRef,
  IdempotencyRecord,
  IdempotencyRecordState,
  InProgressRecord,
  Lease,
  RecordedResponse,
  StoredResponse,
  UnfinishedRecord,
} from './idempotency-record';
export { IDENTITY_SEALER, SYSTEM_CLOCK } from './idempotency-ports';
export type {
  Clock,
  FinishedOutcome,
  IdempotencyRecordStore,
  KeyClaim,
  OutcomeClassifier,
  ResponseSealer,
  TransactionRunner,
} from './idempotency-ports';
export {
  IdempotencyError,
  IdempotencyKeyInUseError,
  IdempotencyKeyInvalidError,
  IdempotencyKeyMissingError,
  IdempotencyKeyReusedError,
  IdempotencyLeaseLostError,
} from './idempotency.errors';
export { parseIdempotencyKey, IDEMPOTENCY_KEY_MAX_LENGTH } from './idempotency-key';
export { fingerprintOf, requestDigestOf } from './fingerprint';
export {
  IDEMPOTENCY_OBSERVER,
  IDEMPOTENCY_OUTCOMES,
  NO_OP_IDEMPOTENCY_OBSERVER,
} from './idempotency.observer';
export type { IdempotencyObserver, IdempotencyOutcome } from './idempotency.observer';
// Maintenance
export { readUnfinishedOperations, UNFINISHED_AGE_CLASSES } from './unfinished-operations';
export type { UnfinishedAgeClass, UnfinishedOperations } from './unfinished-operations';
export { purgeExpiredIdempotencyRecords } from './purge-expired-idempotency-records';
export type { PurgeOptions } from './purge-expired-idempotency-records';
export { IdempotencyPurgeModule } from './idempotency-purge.module';
// Configuration
export { parseIdempotencyConfig } from './idempotency-config';
export type { IdempotencyConfig } from './idempotency-config';
// The Nest adapter
export { IdempotencyModule } from './idempotency.module';
export { Idempotent, IdempotentBody } from './idempotent.decorator';
export { IdempotencyInterceptor } from './idempotency.interceptor';
export { sendRecordedResponse } from './recorded-response.writer';
export { idempotentRequestOf, idempotentRouteOf, noteIdempotentRequest } from './idempotent-route';
export type { IdempotentRequest, IdempotentRouteOptions } from './idempotent-route';
export type { FingerprintSource, IdempotencyModuleOptions, IdempotencyScope } from './idempotency.options';
