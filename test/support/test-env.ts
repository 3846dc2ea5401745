/**
 * Settings shared by the test apps (test-app.ts) and the processes the tests start
 * (api-process.ts): on their own, so a spec that only starts processes does not load the
 * application into Jest.
 */

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789';

/** RATE_LIMIT_PER_SECOND of test apps and processes that do not test rate limits (the highest accepted). */
export const UNLIMITED_RATE = '1000000';
