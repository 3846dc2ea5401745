import { join } from 'node:path';
import { type Env, EnvReader, type ParsedConfig } from '@ledgerkey/process';
import type { SecretsOptions } from './secrets.module';
import { parseSecretsKey } from './secrets-key';
import { InvalidSecretsKeyError } from './secrets.errors';

/** The name of the generated key file inside DATA_DIR. */
export const SECRETS_KEY_FILE = 'secrets.key';

/**
 * SECRETS_KEY and SECRETS_KEY_PREVIOUS (base64 of 32 bytes; a bad value is named, never
 * echoed). Without SECRETS_KEY the key is the file `secrets.key` in `dataDir` (DATA_DIR).
 */
export function parseSecretsConfig(env: Env, dataDir: string): ParsedConfig<SecretsOptions> {
  const reader = new EnvReader(env);
  const keyOf = (name: string): Buffer | undefined => {
    const raw = reader.optional(name);
    if (raw === undefined) return undefined;
    try {
      return parseSecretsKey(raw);
    } catch (error) {
      if (!(error instanceof InvalidSecretsKeyError)) throw error;
      reader.problem(`${name} ${error.message}`);
      return undefined;
    }
  };
  const key = keyOf('SECRETS_KEY');
  const previousKey = keyOf('SECRETS_KEY_PREVIOUS');
  if (previousKey !== undefined && reader.optional('SECRETS_KEY') === undefined) {
    reader.problem('SECRETS_KEY_PREVIOUS needs SECRETS_KEY (the key that replaces it)');
  }
  if (key !== undefined && previousKey?.equals(key)) {
    reader.problem('SECRETS_KEY_PREVIOUS must differ from SECRETS_KEY');
  }
  return reader.parsed({ key, previousKey, keyFile: join(dataDir, SECRETS_KEY_FILE) });
}
