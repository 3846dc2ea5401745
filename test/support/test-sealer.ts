import type { ResponseSealer } from '@ledgerkey/idempotency';

/** A response sealer for tests: reversible, and visibly not the clear text. */
export const TEST_SEALER: ResponseSealer = {
  seal: (body) => `sealed:${Buffer.from(body, 'utf8').toString('base64')}`,
  open: (stored) => Buffer.from(stored.slice('sealed:'.length), 'base64').toString('utf8'),
};
