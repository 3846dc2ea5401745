// Issues an invoice and pays it through the payment provider with the SDK, waiting for the final
// outcome when the provider's answer is not known at once.
//
//   npm start                       # prints "Demo API key: lk_…"; starts the provider sandbox
//   npm run build:sdk
//   LEDGERKEY_API_KEY=lk_… node libs/sdk/examples/pay-invoice.mjs [payment method] [order id]
//
// The provider sandbox's magic payment methods: pm_card_visa (default), pm_card_declined,
// pm_card_lost_response (charged, the answer is lost: ledgerkey answers 202 and the wait finds the
// one charge), pm_card_timeout (held 30 s by the sandbox started by npm start).
// LEDGERKEY_URL defaults to http://127.0.0.1:3000. In your own project, import from '@ledgerkey/sdk'.
import { LedgerkeyApiError, LedgerkeyClient, PaymentStillProcessingError } from '../dist/index.js';

const apiKey = process.env.LEDGERKEY_API_KEY;
if (!apiKey) {
  console.error('Set LEDGERKEY_API_KEY to a company API key (npm start prints a demo one).');
  process.exit(2);
}
const paymentMethod = process.argv[2] ?? 'pm_card_visa';
const orderId = process.argv[3] ?? `order-${Date.now()}`;

const ledgerkey = new LedgerkeyClient({
  baseUrl: process.env.LEDGERKEY_URL ?? 'http://127.0.0.1:3000',
  apiKey,
});

try {
  const { data: invoice } = await ledgerkey.salesInvoices.create(
    {
      orderId,
      customer: { name: 'UAB Pirkėjas', countryCode: 'LT' },
      lines: [{ description: 'Consulting', quantity: '2', unitPrice: 5000, vatRate: '21' }],
    },
    { idempotencyKey: `${orderId}-invoice` },
  );
  console.log(`invoice ${invoice.number} ${invoice.grossTotal} ${invoice.currency}`);

  // One key per logical payment: every request of it, however often sent, is one charge at most.
  const body = { invoiceId: invoice.id, paymentMethod };
  const first = await ledgerkey.payments.create(body, { idempotencyKey: `${orderId}-payment` });
  console.log(`payment ${first.data.id}: ${first.data.status} (final=${first.final})`);

  // Not final (202): the outcome is unknown, not failed. Ask again with the same key until it is known.
  const { data: payment, replayed } = await ledgerkey.payments.createAndWait(body, {
    idempotencyKey: `${orderId}-payment`,
    maxWaitMs: 90_000,
  });
  console.log(
    `final: ${payment.status}${payment.failureCode ? ` (${payment.failureCode})` : ''} ` +
      `charge=${payment.providerChargeId} id=${payment.id} replayed=${replayed}`,
  );
} catch (error) {
  if (error instanceof PaymentStillProcessingError) {
    console.error(`${error.message}; wait on with key ${error.idempotencyKey}`);
    process.exit(1);
  }
  if (error instanceof LedgerkeyApiError) {
    console.error(`${error.status} ${error.code}: ${error.detail} (request ${error.requestId})`);
    process.exit(1);
  }
  throw error;
}
