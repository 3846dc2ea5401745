import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import { resolve } from 'node:path';
import type { Pool } from 'pg';
import { Webhook } from 'standardwebhooks';
import { JobRunner } from '@ledgerkey/jobs';
import { anInvoice, newKey } from '../support/invoice.builder';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool, testDatabaseUrl } from '../support/test-database';

const ROOT = resolve(__dirname, '../..');
const EXAMPLE = resolve(ROOT, 'libs/sdk/examples/webhook-receiver.mjs');

interface ExampleReceiver {
  url: string;
  stop(): Promise<void>;
}

/** The SDK's example receiver as its own process (built SDK, real PostgreSQL). */
async function startExample(secret: string, effectDelayMs = 0, port = 0): Promise<ExampleReceiver> {
  const child: ChildProcess = spawn(process.execPath, [EXAMPLE], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      LEDGERKEY_WEBHOOK_SECRET: secret,
      DATABASE_URL: testDatabaseUrl(),
      PORT: String(port),
      RECEIVER_EFFECT_DELAY_MS: String(effectDelayMs),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`receiver did not start: ${output}`)), 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /receiving ledgerkey webhooks at (\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        done(match[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => fail(new Error(`receiver exited ${code}: ${output}`)));
  });
  return {
    url,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

describe('SDK webhook receiver (example, PostgreSQL store)', () => {
  let t: TestApp;
  let db: Pool;
  const stops: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    // The example imports the built SDK, as a partner's project would import the package.
    execFileSync('npm', ['run', '--silent', 'build:sdk'], { cwd: ROOT, stdio: 'pipe' });
    t = await startTestApp({
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1,1,1',
      WEBHOOK_TIMEOUT_MS: '5000',
      WEBHOOK_LEASE_SECONDS: '10',
    });
    await t.app.get(JobRunner).start({ connectionString: testDatabaseUrl(), concurrency: 2 });
    db = testDatabasePool();
  }, 120_000);
  afterAll(async () => {
    await Promise.all(stops.map((stop) => stop()));
    await t.close();
    await db.end();
  });

  async function issue(company: TestCompany): Promise<{ id: string; number: string }> {
    const response = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send(anInvoice().withLine().build());
    expect(response.status).toBe(201);
    return response.body as { id: string; number: string };
  }

  async function rowsFor(invoiceId: string): Promise<number> {
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM partner_invoices WHERE invoice_id = $1`, [
      invoiceId,
    ]);
    return rows[0].n as number;
  }

  async function eventOf(company: TestCompany, invoiceId: string): Promise<{ id: string; text: string }> {
    const events = await t.http.get('/v1/events?type=invoice.created').set(company.auth);
    const event = (events.body.data as Array<{ id: string; data: { object: { id: string } } }>).find(
      (candidate) => candidate.data.object.id === invoiceId,
    );
    if (!event) throw new Error('no event for the invoice');
    // The delivery body is exactly GET /v1/events/{id}'s body.
    const single = await t.http.get(`/v1/events/${event.id}`).set(company.auth);
    return { id: event.id, text: single.text };
  }

  it('applies an event delivered concurrently and then twice more exactly once; forged and stale deliveries apply nothing', async () => {
    const secret = `whsec_${Buffer.from(newKey('secret').padEnd(32, 'x').slice(0, 32)).toString('base64')}`;
    const receiver = await startExample(secret, 200);
    stops.push(receiver.stop);
    const company = await t.newCompany();
    const invoice = await issue(company);
    const event = await eventOf(company, invoice.id);
    const deliver = (headers: Record<string, string>, body = event.text) =>
      fetch(receiver.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
    const signedNow = () => {
      const at = new Date();
      return {
        'webhook-id': event.id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign(event.id, at, event.text),
      };
    };

    // Forged, then stale: refused, nothing recorded, so the genuine one still applies below.
    const forged = await deliver({
      ...signedNow(),
      'webhook-signature': 'v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
    });
    expect(forged.status).toBe(400);
    expect(await forged.json()).toEqual({ error: 'invalid_signature' });
    const old = new Date(Date.now() - 10 * 60_000);
    const stale = await deliver({
      'webhook-id': event.id,
      'webhook-timestamp': String(Math.floor(old.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(event.id, old, event.text),
    });
    expect(stale.status).toBe(400);
    expect(await stale.json()).toEqual({ error: 'timestamp_out_of_tolerance' });
    const tampered = await deliver(signedNow(), event.text.replace(invoice.number, 'INV-999999'));
    expect(tampered.status).toBe(400);
    expect(await rowsFor(invoice.id)).toBe(0);

    // Eight copies at once (each effect takes 200 ms inside its transaction), then two more.
    const concurrent = await Promise.all(Array.from({ length: 8 }, () => deliver(signedNow())));
    const statuses = await Promise.all(
      concurrent.map(async (response) => [
        response.status,
        ((await response.json()) as { status: string }).status,
      ]),
    );
    expect(statuses.filter(([, status]) => status === 'applied')).toHaveLength(1);
    expect(statuses.filter(([, status]) => status === 'duplicate')).toHaveLength(7);
    expect(statuses.every(([code]) => code === 200)).toBe(true);
    for (let i = 0; i < 2; i++) {
      const again = await deliver(signedNow());
      expect(again.status).toBe(200);
      expect(await again.json()).toEqual({ status: 'duplicate', eventId: event.id });
    }

    expect(await rowsFor(invoice.id)).toBe(1);
    const receipts = await db.query(
      `SELECT count(*)::int AS n FROM ledgerkey_webhook_receipts WHERE webhook_id = $1`,
      [event.id],
    );
    expect(receipts.rows[0].n).toBe(1);
  });

  it("receives ledgerkey's own deliveries: a registered endpoint's events arrive and apply once", async () => {
    const company = await t.newCompany();
    // Register first (the secret is shown once), then start the receiver with it on that URL.
    const port = await freePort();
    const created = await t.http
      .post('/v1/webhook-endpoints/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send({ url: `http://127.0.0.1:${port}/ledgerkey-webhooks`, enabledEvents: ['invoice.created'] });
    expect(created.status).toBe(201);
    const receiver = await startExample(created.body.secret as string, 0, port);
    stops.push(receiver.stop);

    const invoice = await issue(company);
    const deadline = Date.now() + 20_000;
    while ((await rowsFor(invoice.id)) === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    expect(await rowsFor(invoice.id)).toBe(1);
    const attempts = await t.http.get(`/v1/webhook-endpoints/${created.body.id}/attempts`).set(company.auth);
    expect(attempts.body.data).toEqual([expect.objectContaining({ result: 'succeeded', statusCode: 200 })]);
  });
});
