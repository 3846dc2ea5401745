import type { RunningProviderSandbox } from '@ledgerkey/payments';
import { Pool } from 'pg';
import { startApiProcess, stopAllApiProcesses, type ApiProcess } from '../support/api-process';
import { createIsolatedDatabase, type IsolatedDatabase } from '../support/isolated-database';
import { anInvoice, newKey } from '../support/invoice.builder';
import { eventually, paymentBooksOf, paymentEntryOf, paymentEnv } from '../support/payment-books';
import {
  SandboxHttp,
  startTestSandbox,
  stopAllSandboxes,
  TEST_TIMEOUT_HOLD_MS,
} from '../support/provider-sandbox';
import type { TestCompany } from '../support/test-app';
import { startWorkerProcess, stopAllWorkerProcesses } from '../support/worker-process';

const HOOK_TIMEOUT_MS = 60_000;
const TEST_TIMEOUT_MS = 120_000;

interface Answer {
  status: number;
  replayed: boolean;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/**
 * The API as production runs it, SIGKILLed at the three points where a payment can be cut off —
 * (a) after the key and the payment committed, before the provider call; (b) during the call; (c)
 * after the provider answered, before the outcome committed — then restarted: client retries with
 * the same keys, and the recovery worker without any retry, finish every payment with exactly one
 * charge at the provider, one succeeded payment, one ledger entry and the right paid total. (a) and
 * (c) are hit exactly with PAYMENT_TEST_CRASH_POINT (the process kills itself there; refused outside
 * NODE_ENV=test), (b) by killing the process while the sandbox holds `pm_card_timeout`.
 * On a database of its own: the recovery worker started here sees only these payments.
 */
describe('payments: SIGKILL around the provider call', () => {
  let database: IsolatedDatabase;
  let db: Pool;
  let sandbox: RunningProviderSandbox;
  let provider: SandboxHttp;

  beforeAll(async () => {
    database = await createIsolatedDatabase('payments');
    db = new Pool({ connectionString: database.url, max: 4 });
    // pool.end() resolves before its clients' sockets have closed; the drop in afterAll may then
    // terminate one (57P01), which the pool re-emits as 'error' on itself.
    db.on('error', () => undefined);
    sandbox = await startTestSandbox();
    provider = new SandboxHttp(sandbox);
  }, HOOK_TIMEOUT_MS);

  afterAll(async () => {
    await stopAllWorkerProcesses();
    await stopAllApiProcesses();
    await stopAllSandboxes();
    await db?.end();
    await database?.drop();
  }, HOOK_TIMEOUT_MS);

  const env = (extra: Record<string, string> = {}): Record<string, string> => ({
    DATABASE_URL: database.url,
    ...paymentEnv(sandbox),
    NODE_ENV: 'test',
    ...extra,
  });

  async function post(
    api: ApiProcess,
    company: TestCompany,
    path: string,
    body: unknown,
    key: string,
  ): Promise<Answer> {
    const response = await fetch(`${api.baseUrl}${path}`, {
      method: 'POST',
      headers: { ...company.auth, 'Content-Type': 'application/json', 'Idempotency-Key': key },
      body: JSON.stringify(body),
    });
    return {
      status: response.status,
      replayed: response.headers.get('idempotent-replayed') === 'true',
      body: await response.json(),
    };
  }

  /** Retries with the key, as a client does, while the answer is 202 or 409. */
  function payUntilFinal(api: ApiProcess, company: TestCompany, body: unknown, key: string): Promise<Answer> {
    return eventually(
      () => post(api, company, '/v1/payments/create', body, key),
      (answer) => answer.status !== 202 && answer.status !== 409,
      20_000,
      250,
    );
  }

  async function chargesWithReference(reference: string): Promise<number> {
    return provider.chargesWithReference(reference);
  }

  async function paymentOfKey(
    company: TestCompany,
    key: string,
  ): Promise<{ id: string; reference: string; status: string }> {
    const { rows } = await db.query<{ id: string; provider_reference: string; status: string }>(
      `SELECT id, provider_reference, status FROM payments WHERE company_id = $1 AND idempotency_key = $2`,
      [company.companyId, key],
    );
    expect(rows).toHaveLength(1);
    return { id: rows[0].id, reference: rows[0].provider_reference, status: rows[0].status };
  }

  async function recordOfKey(company: TestCompany, key: string): Promise<{ state: string; attempt: number }> {
    const { rows } = await db.query<{ state: string; attempt: number }>(
      `SELECT state, attempt FROM idempotency_records
        WHERE company_id = $1 AND operation = 'payments.create' AND idempotency_key = $2`,
      [company.companyId, key],
    );
    return rows[0];
  }

  /** Sends a payment the process will not answer: it dies (or is killed) on the way. */
  function payIntoTheCrash(
    api: ApiProcess,
    company: TestCompany,
    body: unknown,
    key: string,
  ): Promise<unknown> {
    return post(api, company, '/v1/payments/create', body, key).then(
      (answer) => {
        throw new Error(`the API answered ${answer.status} instead of dying: ${JSON.stringify(answer.body)}`);
      },
      (error: unknown) => error,
    );
  }

  it(
    'each crash leaves a payment that a retry or the recovery finishes: one charge, one succeeded payment, one entry, the paid total',
    async () => {
      // (a) The process kills itself after the key and the payment committed, before calling the provider.
      let api = await startApiProcess({ env: env({ PAYMENT_TEST_CRASH_POINT: 'before_provider_call' }) });
      const company = await api.newCompany();
      const invoices: Array<{ id: string; grossTotal: number }> = [];
      for (let index = 0; index < 3; index += 1) {
        const created = await post(
          api,
          company,
          '/v1/sales/invoices/create',
          anInvoice().build(),
          newKey('invoice'),
        );
        expect(created.status).toBe(201);
        invoices.push(created.body);
      }
      const bodyA = { invoiceId: invoices[0].id, paymentMethod: 'pm_card_visa' };
      const keyA = newKey('crash-a');
      await payIntoTheCrash(api, company, bodyA, keyA);
      expect(await api.exited).toEqual({ code: null, signal: 'SIGKILL' });
      const paymentA = await paymentOfKey(company, keyA);
      expect(paymentA.status).toBe('processing');
      expect(await recordOfKey(company, keyA)).toEqual({ state: 'in_progress', attempt: 1 });
      expect(await chargesWithReference(paymentA.reference)).toBe(0);

      // (c) The process kills itself after the provider answered (charged), before the outcome commits.
      api = await startApiProcess({ env: env({ PAYMENT_TEST_CRASH_POINT: 'after_provider_answer' }) });
      const bodyC = { invoiceId: invoices[1].id, paymentMethod: 'pm_card_visa' };
      const keyC = newKey('crash-c');
      await payIntoTheCrash(api, company, bodyC, keyC);
      expect(await api.exited).toEqual({ code: null, signal: 'SIGKILL' });
      const paymentC = await paymentOfKey(company, keyC);
      expect(paymentC.status).toBe('processing');
      expect(await recordOfKey(company, keyC)).toEqual({ state: 'in_progress', attempt: 1 });
      expect(await chargesWithReference(paymentC.reference)).toBe(1);

      // (b) Killed during the provider call: the sandbox holds pm_card_timeout, then charges anyway.
      api = await startApiProcess({ env: env() });
      const bodyB = { invoiceId: invoices[2].id, paymentMethod: 'pm_card_timeout' };
      const keyB = newKey('crash-b');
      const timeoutsBefore = (await provider.call('GET', '/_sandbox/counters')).body.faultsInjected
        .timeout as number;
      const dying = payIntoTheCrash(api, company, bodyB, keyB);
      await eventually(
        async () => (await provider.call('GET', '/_sandbox/counters')).body.faultsInjected.timeout as number,
        (timeouts) => timeouts > timeoutsBefore,
        5_000,
        20,
      );
      await api.kill('SIGKILL');
      await dying;
      const paymentB = await paymentOfKey(company, keyB);
      expect(paymentB.status).toBe('processing');
      expect(await recordOfKey(company, keyB)).toEqual({ state: 'in_progress', attempt: 1 });
      await eventually(
        () => chargesWithReference(paymentB.reference),
        (charges) => charges === 1,
        TEST_TIMEOUT_HOLD_MS + 5_000,
      );

      // Restart; the clients retry (c) and (b) with their keys: each resumes (the lease ran out),
      // finds the charge by reference and finishes with it.
      api = await startApiProcess({ env: env() });
      const retriedC = await payUntilFinal(api, company, bodyC, keyC);
      const retriedB = await payUntilFinal(api, company, bodyB, keyB);
      for (const [answer, payment] of [
        [retriedC, paymentC],
        [retriedB, paymentB],
      ] as const) {
        expect(answer).toMatchObject({
          status: 201,
          replayed: false,
          body: { id: payment.id, status: 'succeeded' },
        });
      }

      // (a) has no client retry: the recovery worker finishes it on its own.
      expect((await paymentOfKey(company, keyA)).status).toBe('processing');
      await startWorkerProcess(env());
      await eventually(
        () => paymentOfKey(company, keyA),
        (payment) => payment.status === 'succeeded',
        20_000,
        200,
      );
      const replayedA = await post(api, company, '/v1/payments/create', bodyA, keyA);
      expect(replayedA).toMatchObject({
        status: 201,
        replayed: true,
        body: { id: paymentA.id, status: 'succeeded' },
      });

      // Exactly one charge per payment at the provider; locally one succeeded payment, one entry,
      // one event each, the paid totals right, every key finished.
      for (const payment of [paymentA, paymentB, paymentC]) {
        expect(await chargesWithReference(payment.reference)).toBe(1);
      }
      const books = await paymentBooksOf(db, company.companyId);
      expect(books.payments.map((payment) => [payment.invoice_id, payment.status]).sort()).toEqual(
        invoices.map((invoice) => [invoice.id, 'succeeded']).sort(),
      );
      for (const payment of books.payments) {
        expect(books.entries[payment.id]).toEqual(paymentEntryOf(payment.amount));
        expect(books.invoices[payment.invoice_id]).toEqual({ gross: payment.amount, paid: payment.amount });
      }
      expect(Object.keys(books.entries)).toHaveLength(3);
      expect(books.events.sort()).toEqual(
        books.payments.map((payment) => `payment.succeeded ${payment.id}`).sort(),
      );
      expect(Object.values(books.records).map((record) => record.state)).toEqual([
        'completed',
        'completed',
        'completed',
      ]);
      expect(books.unbalanced).toBe(0);
    },
    TEST_TIMEOUT_MS,
  );
});
