import { request as httpRequest } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { Client } from 'pg';
import {
  startApiProcess,
  stopAllApiProcesses,
  type ApiProcess,
  type ExitStatus,
} from '../support/api-process';
import { createIsolatedDatabase, type IsolatedDatabase } from '../support/isolated-database';
import { anInvoice, newKey } from '../support/invoice.builder';
import type { TestCompany } from '../support/test-app';
import { WebhookReceiver } from '../support/webhook-receiver';
import { startWorkerProcess, stopAllWorkerProcesses } from '../support/worker-process';

/** SHUTDOWN_TIMEOUT_MS is left at its default. */
const SHUTDOWN_BOUND_MS = 10_000;
/** Process exit and a loaded machine. */
const MARGIN_MS = 3_000;
const TEST_TIMEOUT_MS = 60_000;

/** A delivery that would hold a stop for a minute if the stop waited for it. */
const SLOW_DELIVERY_ENV = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_TIMEOUT_MS: '60000',
  WEBHOOK_LEASE_SECONDS: '70',
  LOG_LEVEL: 'log',
};

interface Stopped {
  /** null when the process outlived the bound and the margin */
  status: ExitStatus | null;
  elapsedMs: number;
}

/** Sends SIGTERM and waits at most the bound plus the margin for the exit. */
async function stopWithin(child: { pid: number; exited: Promise<ExitStatus> }): Promise<Stopped> {
  const started = Date.now();
  process.kill(child.pid, 'SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const outlived = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), SHUTDOWN_BOUND_MS + MARGIN_MS);
  });
  const status = await Promise.race([child.exited, outlived]);
  clearTimeout(timer);
  return { status, elapsedMs: Date.now() - started };
}

function post(baseUrl: string, company: TestCompany, path: string, body: unknown): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { ...company.auth, 'Content-Type': 'application/json', 'Idempotency-Key': newKey() },
    body: JSON.stringify(body),
  });
}

/** Registers the receiver and issues an invoice: its delivery is in flight once the receiver has it. */
async function startDelivery(
  baseUrl: string,
  company: TestCompany,
  receiver: WebhookReceiver,
): Promise<void> {
  const endpoint = await post(baseUrl, company, '/v1/webhook-endpoints/create', {
    url: receiver.url(),
    enabledEvents: ['invoice.created'],
  });
  expect(endpoint.status).toBe(201);
  expect(
    (await post(baseUrl, company, '/v1/sales/invoices/create', anInvoice().withLine().build())).status,
  ).toBe(201);
  await receiver.waitFor((requests) => requests.length === 1, 20_000);
}

/**
 * A TCP forwarder to the database that can stop answering, as a partitioned network does: after
 * `freeze()` no byte passes either way, and new connections are accepted but never forwarded.
 */
async function startFreezableProxy(target: URL): Promise<{ url: string; freeze(): void; close(): void }> {
  let frozen = false;
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  };
  const server = createServer((client) => {
    track(client);
    if (frozen) return;
    const upstream = connect(Number(target.port || 5432), target.hostname);
    track(upstream);
    client.on('data', (chunk) => frozen || upstream.write(chunk));
    upstream.on('data', (chunk) => frozen || client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as { port: number }).port);
  return {
    url: url.toString(),
    freeze: () => {
      frozen = true;
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

/**
 * A connection holding the company's invoice counter row (`FOR UPDATE`), so that its next invoice
 * waits for its number; `blocking()` resolves once a statement waits for it.
 */
async function counterRowHeld(
  databaseUrl: string,
  company: TestCompany,
): Promise<{ blocking(): Promise<void>; release(): Promise<void>; end(): Promise<void> }> {
  const locker = new Client({ connectionString: databaseUrl });
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query(
    `SELECT last_value FROM document_sequences WHERE company_id = $1 AND series = 'INV' FOR UPDATE`,
    [company.companyId],
  );
  return {
    blocking: async () => {
      for (;;) {
        const { rows } = await locker.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE pg_backend_pid() = ANY (pg_blocking_pids(pid))`,
        );
        if (rows[0].n === 1) return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    release: async () => {
      await locker.query('ROLLBACK');
    },
    end: () => locker.end(),
  };
}

/** Resolves with the error code when a new TCP connection to the API is refused. */
function connectionRefused(baseUrl: string): Promise<string | number> {
  return new Promise((resolve) => {
    const probe = httpRequest(`${baseUrl}/health/live`, { agent: false }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    probe.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    probe.end();
  });
}

/**
 * SIGTERM ends the API and the worker within SHUTDOWN_TIMEOUT_MS (default 10 s) whatever the
 * database does: each process on a database of its own, which the test then drops or cuts off.
 * Needs a current build: `npm run build`.
 */
describe('stopping within SHUTDOWN_TIMEOUT_MS', () => {
  const databases: IsolatedDatabase[] = [];
  const receivers: WebhookReceiver[] = [];
  const cleanups: Array<() => void> = [];

  async function isolatedDatabase(label: string): Promise<IsolatedDatabase> {
    const database = await createIsolatedDatabase(label);
    databases.push(database);
    return database;
  }

  /** An API (worker inside) on a database of its own, and a company whose first invoice is INV-000001. */
  async function apiWithOneInvoice(
    label: string,
  ): Promise<{ database: IsolatedDatabase; api: ApiProcess; company: TestCompany }> {
    const database = await isolatedDatabase(label);
    const api = await startApiProcess({
      env: { DATABASE_URL: database.url, RUN_WORKER: 'true', LOG_LEVEL: 'log' },
    });
    const company = await api.newCompany();
    const first = await post(
      api.baseUrl,
      company,
      '/v1/sales/invoices/create',
      anInvoice().withLine().build(),
    );
    expect(first.status).toBe(201);
    return { database, api, company };
  }

  async function hangingReceiver(): Promise<WebhookReceiver> {
    const receiver = await WebhookReceiver.start({ hangFirst: 1 });
    receivers.push(receiver);
    return receiver;
  }

  afterAll(async () => {
    await stopAllWorkerProcesses();
    await stopAllApiProcesses();
    for (const cleanup of cleanups) cleanup();
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await Promise.all(databases.map((database) => database.drop()));
  }, TEST_TIMEOUT_MS);

  it(
    'the API (worker inside) exits within the bound after its database was dropped mid-delivery',
    async () => {
      const database = await isolatedDatabase('stop_api_dropped');
      const receiver = await hangingReceiver();
      const api = await startApiProcess({
        env: { DATABASE_URL: database.url, RUN_WORKER: 'true', ...SLOW_DELIVERY_ENV },
      });
      await startDelivery(api.baseUrl, await api.newCompany(), receiver);

      await database.drop();
      const stopped = await stopWithin(api);

      expect(stopped.status).toEqual({ code: 1, signal: null });
      expect(stopped.elapsedMs).toBeLessThan(SHUTDOWN_BOUND_MS + MARGIN_MS);
      expect(api.output()).toMatch(/job runner \(running jobs\) did not stop within its share of the bound/);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'the standalone worker exits within the bound after its database was dropped mid-delivery',
    async () => {
      const database = await isolatedDatabase('stop_worker_dropped');
      const receiver = await hangingReceiver();
      const api = await startApiProcess({
        env: { DATABASE_URL: database.url, RUN_WORKER: 'false', ...SLOW_DELIVERY_ENV },
      });
      const worker = await startWorkerProcess({ DATABASE_URL: database.url, ...SLOW_DELIVERY_ENV });
      await startDelivery(api.baseUrl, await api.newCompany(), receiver);

      await database.drop();
      const stopped = await stopWithin(worker);

      expect(stopped.status).toEqual({ code: 1, signal: null });
      expect(stopped.elapsedMs).toBeLessThan(SHUTDOWN_BOUND_MS + MARGIN_MS);
      expect(worker.output()).toMatch(
        /job runner \(running jobs\) did not stop within its share of the bound/,
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'the API exits within the bound when its database stops answering under an in-flight request',
    async () => {
      const database = await isolatedDatabase('stop_api_partitioned');
      const proxy = await startFreezableProxy(new URL(database.url));
      cleanups.push(proxy.close);
      const api = await startApiProcess({
        env: { DATABASE_URL: proxy.url, RUN_WORKER: 'true', LOG_LEVEL: 'log' },
      });
      const company = await api.newCompany();

      proxy.freeze();
      const inFlight = post(api.baseUrl, company, '/v1/sales/invoices/create', anInvoice().withLine().build())
        .then((response) => response.status)
        .catch(() => 'no answer');
      await new Promise((resolve) => setTimeout(resolve, 500));
      const stopped = await stopWithin(api);

      expect(stopped.status).toEqual({ code: 1, signal: null });
      expect(stopped.elapsedMs).toBeLessThan(SHUTDOWN_BOUND_MS + MARGIN_MS);
      expect(api.output()).toMatch(/HTTP server \(in-flight requests\) did not stop within its share/);
      expect(await inFlight).toBe('no answer');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'with a healthy database the stop is graceful: no new connections, the in-flight request is answered, exit 0',
    async () => {
      const { database, api, company } = await apiWithOneInvoice('stop_api_graceful');

      // The next invoice waits for its number while this connection holds the counter row.
      const locker = await counterRowHeld(database.url, company);
      try {
        const inFlight = post(
          api.baseUrl,
          company,
          '/v1/sales/invoices/create',
          anInvoice().withLine().build(),
        );
        await locker.blocking();

        const stopping = stopWithin(api);
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(api.running).toBe(true);
        expect(await connectionRefused(api.baseUrl)).toBe('ECONNREFUSED');
        await locker.release();

        const answered = await inFlight;
        expect(answered.status).toBe(201);
        expect(((await answered.json()) as { number: string }).number).toBe('INV-000002');
        const stopped = await stopping;
        expect(stopped.status).toEqual({ code: 0, signal: null });
        expect(api.output()).toMatch(/stopped in \d+ ms"/);
      } finally {
        await locker.end();
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a client that hung up: its request still runs to its commit before the pool closes, exit 0',
    async () => {
      const { database, api, company } = await apiWithOneInvoice('stop_api_hung_up');
      const key = newKey();

      const locker = await counterRowHeld(database.url, company);
      try {
        const hangUp = new AbortController();
        const abandoned = fetch(`${api.baseUrl}/v1/sales/invoices/create`, {
          method: 'POST',
          headers: { ...company.auth, 'Content-Type': 'application/json', 'Idempotency-Key': key },
          body: JSON.stringify(anInvoice().withLine().build()),
          signal: hangUp.signal,
        }).catch((error: unknown) => error);
        await locker.blocking();
        hangUp.abort();
        expect(await abandoned).toMatchObject({ name: 'AbortError' });

        // The server has no open connection left: only the handler holds the stop back.
        const stopping = stopWithin(api);
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(api.running).toBe(true);
        await locker.release();

        const stopped = await stopping;
        expect(stopped.status).toEqual({ code: 0, signal: null });
        expect(api.output()).not.toMatch(/Connection terminated/);
        const db = new Client({ connectionString: database.url });
        await db.connect();
        try {
          const { rows } = await db.query<{ number: string; state: string }>(
            `SELECT i.number, r.state
               FROM idempotency_records r
               JOIN invoices i ON i.company_id = r.company_id AND i.number = 'INV-000002'
              WHERE r.company_id = $1 AND r.idempotency_key = $2`,
            [company.companyId, key],
          );
          expect(rows).toEqual([{ number: 'INV-000002', state: 'completed' }]);
        } finally {
          await db.end();
        }
      } finally {
        await locker.end();
      }
    },
    TEST_TIMEOUT_MS,
  );
});
