import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'pg';
import type { RunningProviderSandbox } from '@ledgerkey/payments';
import { freePort, startApiProcess, stopAllApiProcesses, type ApiProcess } from '../support/api-process';
import { startChaosDatabase, type ChaosDatabase } from '../support/chaos-database';
import { anInvoice, newKey } from '../support/invoice.builder';
import { SandboxHttp, startTestSandbox, stopAllSandboxes } from '../support/provider-sandbox';
import type { TestCompany } from '../support/test-app';
import { TEST_SECRETS_KEY } from '../support/test-secrets';
import { startWorkerProcess, stopAllWorkerProcesses, type WorkerProcess } from '../support/worker-process';

const COMPANIES = 2;
const PAYMENTS_PER_COMPANY = 10;
/** Payments in flight at once per company. */
const LANES = 3;
const FAULTS =
  'error=0.1,timeout=0.05,lost_response=0.15,duplicate_webhook=0.3,reorder_webhooks=true,webhook_delay_ms=400';
const SEED = 1313;
const SETUP_TIMEOUT_MS = 120_000;
const TEST_TIMEOUT_MS = 240_000;
const SETTLE_TIMEOUT_MS = 90_000;

interface Charge {
  id: string;
  amount: number;
  status: 'succeeded' | 'failed' | 'refunded';
  refunds: Array<{ id: string; amount: number }>;
}
interface Payout {
  id: string;
  amount: number;
  feeAmount: number;
  charges: Array<{ id: string; amount: number }>;
}

/**
 * Chaos with the provider: the sandbox's fault mix on (errors, timeouts and lost answers on charges
 * and refunds; webhooks duplicated, delayed and reordered), payments paid by retrying clients,
 * refunds and payouts made at the provider while the API and the worker are SIGKILLed and
 * restarted. Once the dust settles (every webhook delivered, nothing processing, nothing parked) a
 * reconciliation run reports no open discrepancy, every payout is exactly one settlement, and the
 * trial balance is the provider's records to the cent.
 */
describe('chaos: provider events under faults and kills', () => {
  let database: ChaosDatabase;
  let sandbox: RunningProviderSandbox;
  let provider: SandboxHttp;
  let db: Pool;
  let port: number;
  let api: ApiProcess;
  let worker: WorkerProcess;
  const kills = { api: 0, worker: 0 };

  const processEnv = (): Record<string, string> => ({
    DATABASE_URL: database.url,
    RUN_WORKER: 'false',
    LOG_LEVEL: 'warn',
    SECRETS_KEY: TEST_SECRETS_KEY,
    PAYMENT_PROVIDER_URL: sandbox.url,
    PAYMENT_PROVIDER_API_KEY: sandbox.apiKey,
    PAYMENT_PROVIDER_WEBHOOK_SECRET: sandbox.webhookSecret,
    PAYMENT_PROVIDER_TIMEOUT_MS: '1000',
    PAYMENT_LEASE_SECONDS: '3',
    PAYMENT_RECOVERY_INTERVAL_MS: '200',
    PAYMENT_RECOVERY_MAX_ATTEMPTS: '1000',
  });
  const startApi = async (): Promise<void> => {
    api = await startApiProcess({ env: { ...processEnv(), PORT: String(port) } });
  };
  const startWorker = async (): Promise<void> => {
    worker = await startWorkerProcess({ ...processEnv(), WORKER_CONCURRENCY: '4' });
  };

  beforeAll(async () => {
    database = await startChaosDatabase();
    db = new Pool({ connectionString: database.url, max: 3 });
    // The database's shutdown in afterAll terminates idle clients (57P01), re-emitted on the pool.
    db.on('error', () => undefined);
    port = await freePort();
    sandbox = await startTestSandbox({
      webhookUrl: `http://127.0.0.1:${port}/v1/providers/sandbox/events`,
      faults: FAULTS,
      seed: SEED,
    });
    provider = new SandboxHttp(sandbox);
    await startApi();
    await startWorker();
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await stopAllWorkerProcesses();
    await stopAllApiProcesses();
    await stopAllSandboxes();
    await db?.end();
    await database?.destroy();
  }, 60_000);

  /** A call to whatever API process runs now; a dead one answers nothing, which is retried. */
  async function call(
    company: TestCompany,
    path: string,
    key: string,
    body: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> } | null> {
    try {
      const response = await fetch(`http://127.0.0.1:${port}${path}`, {
        method: 'POST',
        headers: { ...company.auth, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    } catch {
      return null;
    }
  }

  /** Retries with the same key until the answer is final (a client that may not give up). */
  async function untilFinal(
    company: TestCompany,
    path: string,
    body: unknown,
    key = newKey('chaos'),
  ): Promise<Record<string, unknown>> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const answer = await call(company, path, key, body);
      if (answer !== null && answer.status === 201) return answer.body;
      if (answer !== null && answer.status < 500 && ![202, 409, 429].includes(answer.status)) {
        throw new Error(`${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
      }
      if (Date.now() > deadline) throw new Error(`${path} not final within 60 s: ${JSON.stringify(answer)}`);
      await sleep(150 + Math.random() * 150);
    }
  }

  /** A provider write that may meet an injected fault: retried with its idempotency key. */
  async function atProvider(
    path: string,
    body: unknown,
    key = randomUUID(),
  ): Promise<Record<string, unknown>> {
    for (let attempt = 0; attempt < 100; attempt += 1) {
      try {
        const answer = await provider.call('POST', path, { body, idempotencyKey: key, timeoutMs: 5000 });
        if (answer.status === 201 || answer.status === 200) return answer.body as Record<string, unknown>;
        if (answer.status < 500 && answer.status !== 409) {
          throw new Error(`${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
        }
      } catch (error) {
        if (error instanceof Error && error.message.startsWith(path)) throw error;
      }
      await sleep(100);
    }
    throw new Error(`${path}: no answer after 100 attempts`);
  }

  async function newCompany(): Promise<TestCompany> {
    for (;;) {
      try {
        return await api.newCompany();
      } catch {
        await sleep(200);
      }
    }
  }

  async function payInvoices(company: TestCompany): Promise<Array<Record<string, unknown>>> {
    const payments: Array<Record<string, unknown>> = [];
    const queue = Array.from({ length: PAYMENTS_PER_COMPANY }, (_, index) => index);
    await Promise.all(
      Array.from({ length: LANES }, async () => {
        for (let index = queue.shift(); index !== undefined; index = queue.shift()) {
          const invoice = await untilFinal(company, '/v1/sales/invoices/create', anInvoice().build());
          payments.push(
            await untilFinal(company, '/v1/payments/create', {
              invoiceId: invoice.id,
              paymentMethod: index % 5 === 4 ? 'pm_card_declined' : 'pm_card_visa',
            }),
          );
        }
      }),
    );
    return payments;
  }

  async function list<T>(path: string): Promise<T[]> {
    const items: T[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await provider.call(
        'GET',
        `${path}&limit=1000${after === undefined ? '' : `&startingAfter=${after}`}`,
      );
      const { data, hasMore } = page.body as { data: Array<T & { id: string }>; hasMore: boolean };
      items.push(...data);
      if (!hasMore || data.length === 0) return items;
      after = data[data.length - 1].id;
    }
  }

  async function scalar(sql: string, values: unknown[]): Promise<number> {
    const { rows } = await db.query<{ n: string | null }>(sql, values);
    return Number(rows[0].n ?? 0);
  }

  it(
    'ends with zero open discrepancies, one settlement per payout and the provider’s books to the cent',
    async () => {
      const started = new Date(Date.now() - 60_000);
      const companies: TestCompany[] = [];
      for (let index = 0; index < COMPANIES; index += 1) companies.push(await newCompany());

      const chaos = (async () => {
        for (let round = 0; round < 3; round += 1) {
          await sleep(2500);
          await api.kill('SIGKILL');
          kills.api += 1;
          await startApi();
          await sleep(1500);
          await worker.kill('SIGKILL');
          kills.worker += 1;
          await startWorker();
        }
      })();
      const paid = await Promise.all(
        companies.map(async (company) => {
          const payments = await payInvoices(company);
          // Refunds and a payout at the provider while processes die: some events arrive before
          // the payments they need have their outcome here.
          const succeeded = payments.filter((payment) => payment.status === 'succeeded');
          for (const payment of succeeded.slice(0, 3)) {
            await atProvider(`/v1/charges/${String(payment.providerChargeId)}/refunds`, { amount: 1000 });
          }
          await atProvider('/v1/payouts', { companyId: company.companyId });
          await atProvider(`/v1/charges/${String(succeeded[3]?.providerChargeId)}/refunds`, {});
          return payments;
        }),
      );
      await chaos;
      expect(kills).toEqual({ api: 3, worker: 3 });
      expect(paid.flat()).toHaveLength(COMPANIES * PAYMENTS_PER_COMPANY);
      // A last payout of what is left, then the faults stop: the dust settles.
      for (const company of companies) await atProvider('/v1/payouts', { companyId: company.companyId });
      await provider.call('PUT', '/_sandbox/faults', { body: { faults: '' } });

      const deadline = Date.now() + SETTLE_TIMEOUT_MS;
      for (;;) {
        const counters = (await provider.call('GET', '/_sandbox/counters')).body as {
          events: { pending: number };
        };
        const processing = await scalar(`SELECT count(*) AS n FROM payments WHERE status = 'processing'`, []);
        const parked = await scalar(`SELECT count(*) AS n FROM provider_events WHERE status = 'parked'`, []);
        if (counters.events.pending === 0 && processing === 0 && parked === 0) break;
        if (Date.now() > deadline) {
          throw new Error(
            `not settled: ${JSON.stringify({ pending: counters.events.pending, processing, parked })}\n` +
              `${api.output()}\n${worker.output()}`,
          );
        }
        await sleep(500);
      }
      const faults = (await provider.call('GET', '/_sandbox/counters')).body as {
        faultsInjected: Record<string, number>;
      };
      expect(faults.faultsInjected.duplicateWebhook).toBeGreaterThan(0);
      expect(faults.faultsInjected.error + faults.faultsInjected.lostResponse).toBeGreaterThan(0);

      for (const company of companies) {
        const to = new Date(Date.now() + 60_000);
        const run = await untilFinal(company, '/v1/reconciliation/runs/create', {
          from: started.toISOString(),
          to: to.toISOString(),
        });
        const discrepancies = run.discrepancies as Array<{ resolution: string; detail: string }>;
        expect(discrepancies.filter((d) => d.resolution === 'needs_review')).toEqual([]);

        const charges = await list<Charge>(`/v1/charges?companyId=${company.companyId}`);
        const payouts = await list<Payout>(`/v1/payouts?companyId=${company.companyId}`);
        expect(payouts.length).toBeGreaterThanOrEqual(1);
        const { rows: settlements } = await db.query<{ payout_id: string; n: number }>(
          `SELECT payout_id, count(*)::int AS n FROM settlements WHERE company_id = $1 GROUP BY payout_id`,
          [company.companyId],
        );
        expect(settlements.map((s) => `${s.payout_id} ${s.n}`).sort()).toEqual(
          payouts.map((payout) => `${payout.id} 1`).sort(),
        );

        const collected = charges.filter((c) => c.status !== 'failed').reduce((sum, c) => sum + c.amount, 0);
        const refunded = charges.flatMap((c) => c.refunds).reduce((sum, r) => sum + r.amount, 0);
        const paidOut = payouts.flatMap((p) => p.charges).reduce((sum, c) => sum + c.amount, 0);
        const bank = payouts.reduce((sum, p) => sum + p.amount, 0);
        const fees = payouts.reduce((sum, p) => sum + p.feeAmount, 0);
        const { rows } = await db.query<{ account: string; balance: string }>(
          `SELECT account, (sum(debit) - sum(credit))::text AS balance FROM journal_lines
            WHERE company_id = $1 GROUP BY account`,
          [company.companyId],
        );
        const balance = Object.fromEntries(rows.map((row) => [row.account, Number(row.balance)]));
        expect({
          providerClearing: balance.provider_clearing ?? 0,
          bank: balance.bank ?? 0,
          fees: balance.payment_fees ?? 0,
        }).toEqual({ providerClearing: collected - refunded - paidOut, bank, fees });
        const paidTotal = await scalar(`SELECT sum(paid_total) AS n FROM invoices WHERE company_id = $1`, [
          company.companyId,
        ]);
        expect(paidTotal).toBe(collected - refunded);
        const unbalanced = await scalar(
          `SELECT count(*) AS n FROM (SELECT entry_id FROM journal_lines WHERE company_id = $1
             GROUP BY entry_id HAVING sum(debit) <> sum(credit)) u`,
          [company.companyId],
        );
        expect(unbalanced).toBe(0);
      }
    },
    TEST_TIMEOUT_MS,
  );
});
