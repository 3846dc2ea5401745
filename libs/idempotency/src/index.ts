export { IdempotencyModule } from './idempotency.module';
export { Idempotent, IdempotentBody } from './idempotent.decorator';
export { idempotentRequestOf } from './idempotent-route';
export type { IdempotentRequest, IdempotentRouteOptions } from './idempotent-route';
export { IdempotencyInterceptor, JSON_CONTENT_TYPE } from './idempotency.interceptor';
export type {
  FingerprintSource,
  IdempotencyModuleOptions,
  IdempotencyScope,
  RecordedResponse,
} from './idempotency.options';
export {
  IDEMPOTENCY_OBSERVER,
  IDEMPOTENCY_OUTCOMES,
  NO_OP_IDEMPOTENCY_OBSERVER,
} from './idempotency.observer';
export type { IdempotencyObserver, IdempotencyOutcome } from './idempotency.observer';
export { RecordedResponseReplay } from './recorded-response';
export {
  IdempotencyKeyInUseError,
  IdempotencyKeyInvalidError,
  IdempotencyKeyMissingError,
  IdempotencyKeyReusedError,
} from './idempotency.errors';
export { parseIdempotencyKey, IDEMPOTENCY_KEY_MAX_LENGTH } from './idempotency-key';
export { fingerprintOf } from './fingerprint';
export {
  purgeExpiredIdempotencyRecords,
  PURGE_IDEMPOTENCY_KEYS_TASK,
} from './purge-expired-idempotency-records';
export type { PurgeOptions } from './purge-expired-idempotency-records';
