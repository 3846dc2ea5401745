export { SecretBox, isSealed, keyIdOf } from './secret-box';
export type { Sealer, SecretBoxKeys } from './secret-box';
export { parseSecretsKey, SECRETS_KEY_BYTES } from './secrets-key';
export { loadOrCreateKeyFile } from './key-file';
export type { KeyFile } from './key-file';
export { SecretsModule, secretBoxOf } from './secrets.module';
export type { SecretsOptions } from './secrets.module';
export { InvalidSecretsKeyError, SealedValueUnreadableError, ValueNotSealedError } from './secrets.errors';
export type { UnreadableReason } from './secrets.errors';
