import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { type PrometheusSample, parsePrometheusText } from './prometheus';
import type { SandboxHttp } from './provider-sandbox';
import type { Queryable } from './tenant-keys';

/** The samples of `GET /metrics`. */
export async function scrape(baseUrl: string): Promise<PrometheusSample[]> {
  const response = await fetch(`${baseUrl}/metrics`);
  return parsePrometheusText(await response.text());
}

/** A provider event as the sandbox stores and sends it. */
export interface SandboxEvent {
  id: string;
  type: string;
  createdAt: string;
  // Tests read what they assert on.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  data: any;
}

/** The body the sandbox POSTs for an event: exactly `{ id, type, createdAt, data }`. */
export function eventBody(event: SandboxEvent): string {
  return JSON.stringify({ id: event.id, type: event.type, createdAt: event.createdAt, data: event.data });
}

/** Standard Webhooks headers for `body`, signed with `secret` at `at` (default now). */
export function signedHeaders(
  secret: string,
  id: string,
  body: string,
  at = new Date(),
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  };
}

/** The company's events at the sandbox, in the order they were made. */
export async function sandboxEventsOf(provider: SandboxHttp, companyId: string): Promise<SandboxEvent[]> {
  const { body } = await provider.call('GET', '/_sandbox/events');
  return (body as { data: SandboxEvent[] }).data.filter((event) => companyOf(event) === companyId);
}

function companyOf(event: SandboxEvent): string | undefined {
  return event.type === 'payout.paid' ? event.data.companyId : event.data.metadata?.companyId;
}

/** What a company's books say, in terms independent of ids and times: for comparing two runs. */
export interface ComparableBooks {
  trialBalance: string[];
  paidTotals: number[];
  settlements: string[];
  refunds: number[];
  payments: string[];
}

export async function comparableBooksOf(db: Queryable, companyId: string): Promise<ComparableBooks> {
  const trial = await db.query<{ account: string; debit: string; credit: string }>(
    `SELECT l.account, sum(l.debit)::text AS debit, sum(l.credit)::text AS credit
       FROM journal_lines l WHERE l.company_id = $1 GROUP BY l.account ORDER BY l.account`,
    [companyId],
  );
  const invoices = await db.query<{ paid_total: string }>(
    `SELECT paid_total::text FROM invoices WHERE company_id = $1 ORDER BY series, sequence`,
    [companyId],
  );
  const settlements = await db.query<{ line: string }>(
    `SELECT format('%s fee %s %s', allocated_total, fee_amount, source) AS line FROM settlements
      WHERE company_id = $1 ORDER BY allocated_total, fee_amount`,
    [companyId],
  );
  const refunds = await db.query<{ value: string }>(
    `SELECT amount::text AS value FROM payment_refunds WHERE company_id = $1 ORDER BY amount`,
    [companyId],
  );
  const payments = await db.query<{ line: string }>(
    `SELECT format('%s %s', amount, status) AS line FROM payments WHERE company_id = $1 ORDER BY amount, status`,
    [companyId],
  );
  return {
    trialBalance: trial.rows.map((row) => `${row.account} ${row.debit}/${row.credit}`),
    paidTotals: invoices.rows.map((row) => Number(row.paid_total)),
    settlements: settlements.rows.map((row) => row.line),
    refunds: refunds.rows.map((row) => Number(row.value)),
    payments: payments.rows.map((row) => row.line),
  };
}

/**
 * An HTTP relay with a fixed address, for a sandbox that must know its webhook URL before the
 * receiver's port is known (or while the receiver is restarted): forwards each POST, body and
 * headers, to `target`; answers 503 while there is none or it cannot be reached, so the sandbox
 * retries.
 */
export interface WebhookRelay {
  readonly url: string;
  target: string | undefined;
  close(): Promise<void>;
}

export async function startWebhookRelay(): Promise<WebhookRelay> {
  const relay = { target: undefined as string | undefined };
  const server: Server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const target = relay.target;
      if (target === undefined) {
        response.writeHead(503).end();
        return;
      }
      const headers: Record<string, string> = {};
      for (const name of ['content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature']) {
        const value = request.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      fetch(`${target}${request.url ?? ''}`, {
        method: 'POST',
        headers,
        body: Buffer.concat(chunks),
        signal: AbortSignal.timeout(5000),
      })
        .then(async (answer) => {
          response.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
        })
        .catch(() => response.writeHead(503).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get target() {
      return relay.target;
    },
    set target(value) {
      relay.target = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
