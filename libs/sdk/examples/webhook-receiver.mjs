// Receives ledgerkey's webhooks: verifies each delivery (Standard Webhooks signature, timestamp
// within 5 minutes) and applies each event once, however often it is delivered — the event's id
// (`webhook-id`) is recorded in PostgreSQL in the same transaction as the effect.
//
//   npm run build:sdk
//   LEDGERKEY_WEBHOOK_SECRET=whsec_… DATABASE_URL=postgres://… PORT=4000 node libs/sdk/examples/webhook-receiver.mjs
//
// Register http(s)://<this host>:4000/ledgerkey-webhooks as a webhook endpoint; its create answer
// shows the secret once. The effect here: one row per invoice in `partner_invoices` (no unique key
// of its own — the receipts table is what keeps it to one row per event).
// RECEIVER_EFFECT_DELAY_MS makes each effect slower (to watch concurrent repeats wait and drop).
// In your own project, import from '@ledgerkey/sdk' and pass your own `pg` Pool.
import { createServer } from 'node:http';
import pg from 'pg';
import { PostgresWebhookStore, WebhookReceiver, WebhookVerificationError } from '../dist/index.js';

/** Starts the receiver; resolves with its URL and a `close()`. */
export async function startWebhookReceiver({
  secret,
  pool,
  port = 4000,
  host = '127.0.0.1',
  effectDelayMs = 0,
}) {
  const store = new PostgresWebhookStore(pool);
  await store.install();
  await pool.query(`CREATE TABLE IF NOT EXISTS partner_invoices (
    event_id    text NOT NULL,
    invoice_id  uuid NOT NULL,
    number      text NOT NULL,
    gross_total bigint NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now()
  )`);
  const receiver = new WebhookReceiver({ secret, store });

  const server = createServer(async (request, response) => {
    if (request.method !== 'POST' || request.url !== '/ledgerkey-webhooks') {
      return answer(response, 404, { error: 'not found' });
    }
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    // The raw bytes: the signature covers the body exactly as sent.
    const body = Buffer.concat(chunks);
    try {
      const receipt = await receiver.receive(body, request.headers, async (event, tx) => {
        if (effectDelayMs > 0) await tx.query('SELECT pg_sleep($1)', [effectDelayMs / 1000]);
        if (event.type === 'invoice.created') {
          const invoice = event.data.object;
          await tx.query(
            'INSERT INTO partner_invoices (event_id, invoice_id, number, gross_total) VALUES ($1, $2, $3, $4)',
            [event.id, invoice.id, invoice.number, invoice.grossTotal],
          );
        }
      });
      // Applied now or before: either way ledgerkey may stop retrying.
      answer(response, 200, { status: receipt.status, eventId: receipt.event.id });
    } catch (error) {
      if (error instanceof WebhookVerificationError) return answer(response, 400, { error: error.reason });
      console.error('webhook handler failed', error);
      // Nothing was recorded: ledgerkey retries later with the same webhook-id.
      answer(response, 500, { error: 'handler failed' });
    }
  });
  await new Promise((resolve) => server.listen(port, host, resolve));
  const { port: actualPort } = server.address();
  return {
    url: `http://${host}:${actualPort}/ledgerkey-webhooks`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

function answer(response, status, body) {
  response.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const secret = process.env.LEDGERKEY_WEBHOOK_SECRET;
  if (!secret || !process.env.DATABASE_URL) {
    console.error('Set LEDGERKEY_WEBHOOK_SECRET (the endpoint secret, whsec_…) and DATABASE_URL.');
    process.exit(2);
  }
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
  const { url, close } = await startWebhookReceiver({
    secret,
    pool,
    port: Number(process.env.PORT ?? 4000),
    effectDelayMs: Number(process.env.RECEIVER_EFFECT_DELAY_MS ?? 0),
  });
  console.log(`receiving ledgerkey webhooks at ${url}`);
  const stop = async () => {
    await close();
    await pool.end();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
