export { IdempotencyModule } from './idempotency.module';
export { Idempotent, IdempotentBody } from './idempotent.decorator';
export type { IdempotentRouteOptions } from './idempotent-route';
export { IdempotencyInterceptor, JSON_CONTENT_TYPE } from './idempotency.interceptor';
export type {
  FingerprintSource,
  IdempotencyModuleOptions,
  IdempotencyScope,
  RecordedResponse,
} from './idempotency.options';
export { RecordedResponseReplay } from './recorded-response';
export {
  IdempotencyKeyInUseError,
  IdempotencyKeyInvalidError,
  IdempotencyKeyMissingError,
  IdempotencyKeyReusedError,
} from './idempotency.errors';
export { parseIdempotencyKey, IDEMPOTENCY_KEY_MAX_LENGTH } from './idempotency-key';
export { fingerprintOf } from './fingerprint';
