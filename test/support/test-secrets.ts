import { createHash } from 'node:crypto';
import { SecretBox } from '@ledgerkey/secrets';

/**
 * The one SECRETS_KEY of every test process (test apps, API and worker child processes, the
 * CLI): processes sharing the test database must seal and open with the same key, and none may
 * generate a key file of its own. Fixed, so a failure can be reproduced.
 */
export const TEST_SECRETS_KEY = createHash('sha256').update('ledgerkey test secrets key').digest('base64');

/** A box with the test key, for reading what the processes under test stored. */
export function testSecretBox(): SecretBox {
  return new SecretBox({ current: Buffer.from(TEST_SECRETS_KEY, 'base64') });
}
