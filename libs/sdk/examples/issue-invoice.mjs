// Issues one invoice for an order through the SDK, then issues it again to show the replay.
//
//   npm start                       # prints "Demo API key: lk_…"
//   npm run build:sdk
//   LEDGERKEY_URL=http://127.0.0.1:3000 LEDGERKEY_API_KEY=lk_… node libs/sdk/examples/issue-invoice.mjs [order-id]
//
// LEDGERKEY_URL defaults to http://127.0.0.1:3000. The order id defaults to a fresh one; the
// Idempotency-Key is `<order-id>-invoice`, so name an order the README's curl example (order-1041)
// did not use. In your own project, import from '@ledgerkey/sdk'.
import { LedgerkeyApiError, LedgerkeyClient } from '../dist/index.js';

const apiKey = process.env.LEDGERKEY_API_KEY;
if (!apiKey) {
  console.error('Set LEDGERKEY_API_KEY to a company API key (npm start prints a demo one).');
  process.exit(2);
}
const orderId = process.argv[2] ?? `order-${Date.now()}`;

const ledgerkey = new LedgerkeyClient({
  baseUrl: process.env.LEDGERKEY_URL ?? 'http://127.0.0.1:3000',
  apiKey,
  retry: { maxAttempts: 5 },
  timeoutMs: 10_000,
});

const body = {
  orderId,
  customer: { name: 'UAB Pirkėjas', countryCode: 'LT', vatId: 'LT100001234567' },
  lines: [{ description: 'Consulting', quantity: '2', unitPrice: 5000, vatRate: '21' }],
};

try {
  // A deterministic key: the same order can never be invoiced twice, whatever is retried.
  const first = await ledgerkey.salesInvoices.create(body, {
    idempotencyKey: `${orderId}-invoice`,
    onKey: (key) => console.log(`key ${key} (persist it before sending if a crash could lose it)`),
  });
  console.log(
    `${first.data.number} ${first.data.grossTotal} ${first.data.currency} id=${first.data.id} replayed=${first.replayed}`,
  );

  const again = await ledgerkey.salesInvoices.create(body, { idempotencyKey: `${orderId}-invoice` });
  console.log(`again: ${again.data.number} id=${again.data.id} replayed=${again.replayed}`);
} catch (error) {
  if (error instanceof LedgerkeyApiError) {
    console.error(`${error.status} ${error.code}: ${error.detail} (request ${error.requestId})`);
    process.exit(1);
  }
  throw error;
}
