import { type DynamicModule, Logger, Module } from '@nestjs/common';
import { loadOrCreateKeyFile } from './key-file';
import { SecretBox } from './secret-box';

/** Where this process's keys come from (parsed configuration). */
export interface SecretsOptions {
  /** SECRETS_KEY; when unset, the key in `keyFile` (created there on first start). */
  key: Buffer | undefined;
  /** SECRETS_KEY_PREVIOUS: opens values sealed before a rotation. */
  previousKey: Buffer | undefined;
  /** `${DATA_DIR}/secrets.key` */
  keyFile: string;
}

/**
 * Provides the process's `SecretBox` everywhere (global). Without SECRETS_KEY the key file is
 * read, or created on the first start; processes sharing the data folder share the key.
 */
@Module({})
export class SecretsModule {
  static forRoot(options: SecretsOptions): DynamicModule {
    return {
      module: SecretsModule,
      global: true,
      providers: [{ provide: SecretBox, useFactory: () => secretBoxOf(options) }],
      exports: [SecretBox],
    };
  }
}

/**
 * The box for these options; reads or creates the key file when no key is configured.
 * @throws InvalidSecretsKeyError when the key file holds no key
 */
export async function secretBoxOf(options: SecretsOptions): Promise<SecretBox> {
  if (options.key !== undefined)
    return new SecretBox({ current: options.key, previous: options.previousKey });
  const logger = new Logger('Secrets');
  const file = await loadOrCreateKeyFile(options.keyFile);
  if (file.created) {
    logger.warn(
      `SECRETS_KEY is not set: generated a key into ${options.keyFile}. Keep that file (or set SECRETS_KEY to its ` +
        `content): without it, stored webhook secrets cannot be used. Production deployments set SECRETS_KEY.`,
    );
  } else {
    logger.log(`SECRETS_KEY is not set: using the key in ${options.keyFile}`);
  }
  if (file.readableByOthers) logger.warn(`${options.keyFile} is readable by other users: chmod 600 it`);
  return new SecretBox({ current: file.key, previous: options.previousKey });
}
