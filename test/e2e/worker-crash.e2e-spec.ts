import type { Pool } from 'pg';
import { Webhook } from 'standardwebhooks';
import { startApiProcess, stopAllApiProcesses, type ApiProcess } from '../support/api-process';
import {
  createIsolatedDatabase,
  type IsolatedDatabase,
  isolatedDatabasePool,
} from '../support/isolated-database';
import { anInvoice, newKey } from '../support/invoice.builder';
import type { TestCompany } from '../support/test-app';
import { WebhookReceiver } from '../support/webhook-receiver';
import { startWorkerProcess, stopAllWorkerProcesses, type WorkerProcess } from '../support/worker-process';

const HOOK_TIMEOUT_MS = 60_000;
const TEST_TIMEOUT_MS = 90_000;

/**
 * Standalone worker processes (`node dist/apps/worker/src/main.js`) killed and raced. On a
 * database of their own, so no other suite's worker delivers (or abandons) these deliveries and
 * every attempt can be counted. Needs a current build: `npm run build`.
 */
describe('webhook workers: crash recovery and concurrency', () => {
  let database: IsolatedDatabase;
  let db: Pool;
  let api: ApiProcess;
  const receivers: WebhookReceiver[] = [];

  const workerEnv = (): Record<string, string> => ({
    DATABASE_URL: database.url,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '1,1,1',
    WEBHOOK_TIMEOUT_MS: '3000',
    WEBHOOK_LEASE_SECONDS: '4',
    WEBHOOK_SWEEP_INTERVAL_MS: '300',
  });

  beforeAll(async () => {
    database = await createIsolatedDatabase('workers');
    db = isolatedDatabasePool(database, 4);
    api = await startApiProcess({
      env: { DATABASE_URL: database.url, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', RUN_WORKER: 'false' },
    });
  }, HOOK_TIMEOUT_MS);

  afterAll(async () => {
    await stopAllWorkerProcesses();
    await stopAllApiProcesses();
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await db?.end();
    await database?.drop();
  }, HOOK_TIMEOUT_MS);

  async function post(company: TestCompany, path: string, body: unknown, key: string): Promise<Response> {
    return fetch(`${api.baseUrl}${path}`, {
      method: 'POST',
      headers: { ...company.auth, 'Content-Type': 'application/json', 'Idempotency-Key': key },
      body: JSON.stringify(body),
    });
  }

  async function registerEndpoint(
    company: TestCompany,
    receiver: WebhookReceiver,
  ): Promise<{ id: string; secret: string }> {
    const response = await post(
      company,
      '/v1/webhook-endpoints/create',
      { url: receiver.url(), enabledEvents: ['invoice.created'] },
      newKey('endpoint'),
    );
    expect(response.status).toBe(201);
    return (await response.json()) as { id: string; secret: string };
  }

  /** The company's events: a create's event is listed as soon as its 201 has been answered. */
  async function events(company: TestCompany): Promise<Array<{ id: string }>> {
    const response = await fetch(`${api.baseUrl}/v1/events?limit=100`, { headers: company.auth });
    return ((await response.json()) as { data: Array<{ id: string }> }).data;
  }

  it(
    'a worker SIGKILLed mid-delivery is replaced and the event is still delivered; a replayed create emits nothing',
    async () => {
      const receiver = await WebhookReceiver.start({ hangFirst: 1 });
      receivers.push(receiver);
      const company = await api.newCompany();
      const endpoint = await registerEndpoint(company, receiver);
      let worker: WorkerProcess = await startWorkerProcess({ ...workerEnv(), WORKER_CONCURRENCY: '1' });

      const key = newKey('invoice');
      const body = anInvoice().withOrderId().withLine().build();
      const created = await post(company, '/v1/sales/invoices/create', body, key);
      expect(created.status).toBe(201);
      const [event] = await events(company);

      // The receiver holds the first request open: the worker is mid-attempt, holding the lease.
      await receiver.waitFor((requests) => requests.length === 1, 20_000);
      const killed = await worker.kill('SIGKILL');
      expect(killed.signal).toBe('SIGKILL');
      const { rows: leased } = await db.query(
        `SELECT status, attempt_count, leased_until > now() AS lease_live FROM webhook_deliveries WHERE company_id = $1`,
        [company.companyId],
      );
      expect(leased).toEqual([{ status: 'pending', attempt_count: 1, lease_live: true }]);

      worker = await startWorkerProcess(workerEnv());
      await receiver.waitFor((requests) => requests.some((request) => request.answer === 200), 30_000);

      const requests = receiver.requestsFor(event.id);
      expect(requests.map((request) => request.answer)).toEqual(['hung', 200]);
      const verifier = new Webhook(endpoint.secret);
      for (const request of requests)
        expect(verifier.verify(request.body, request.headers)).toMatchObject({ id: event.id });

      const attempts = await fetch(`${api.baseUrl}/v1/webhook-endpoints/${endpoint.id}/attempts`, {
        headers: company.auth,
      });
      const attemptList = (await attempts.json()) as { data: Array<Record<string, unknown>> };
      expect(
        attemptList.data.map(({ attemptNumber, result, statusCode }) => ({
          attemptNumber,
          result,
          statusCode,
        })),
      ).toEqual([
        { attemptNumber: 1, result: 'abandoned', statusCode: null },
        { attemptNumber: 2, result: 'succeeded', statusCode: 200 },
      ]);

      // The replayed create runs nothing: no second event, no second delivery.
      const replay = await post(company, '/v1/sales/invoices/create', body, key);
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await events(company)).toHaveLength(1);
      const { rows } = await db.query(
        `SELECT status, attempt_count, leased_until FROM webhook_deliveries WHERE company_id = $1`,
        [company.companyId],
      );
      expect(rows).toEqual([{ status: 'delivered', attempt_count: 2, leased_until: null }]);
      expect(receiver.requests).toHaveLength(2);

      // A graceful stop lets the worker finish and exit cleanly.
      const stopped = await worker.kill('SIGTERM');
      expect(stopped.code === 0 || stopped.signal === 'SIGTERM').toBe(true);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'two workers on one database deliver each of 30 events exactly once, one attempt each',
    async () => {
      const receiver = await WebhookReceiver.start();
      receivers.push(receiver);
      const company = await api.newCompany();
      await registerEndpoint(company, receiver);
      const workers = await Promise.all([
        startWorkerProcess({ ...workerEnv(), WORKER_CONCURRENCY: '4' }),
        startWorkerProcess({ ...workerEnv(), WORKER_CONCURRENCY: '4' }),
      ]);

      const count = 30;
      for (let batch = 0; batch < count; batch += 10) {
        const responses = await Promise.all(
          Array.from({ length: 10 }, () =>
            post(company, '/v1/sales/invoices/create', anInvoice().withLine().build(), newKey('invoice')),
          ),
        );
        expect(responses.map((response) => response.status)).toEqual(Array(10).fill(201));
      }
      const eventIds = (await events(company)).map((event) => event.id);
      expect(eventIds).toHaveLength(count);

      await receiver.waitFor((requests) => requests.length >= count, 30_000);
      // Give a duplicate time to show up.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const received = receiver.requests.map((request) => request.headers['webhook-id']);
      expect([...received].sort()).toEqual([...eventIds].sort());

      const { rows } = await db.query<{ event_id: string; attempts: number; delivered: boolean }>(
        `SELECT d.event_id, count(a.id)::int AS attempts, bool_and(d.status = 'delivered') AS delivered
           FROM webhook_deliveries d
           LEFT JOIN webhook_attempts a ON a.delivery_id = d.id
          WHERE d.company_id = $1
          GROUP BY d.event_id`,
        [company.companyId],
      );
      expect(rows).toHaveLength(count);
      expect(rows.filter((row) => row.attempts !== 1 || !row.delivered)).toEqual([]);
      for (const worker of workers) expect(worker.running).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );
});
