import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { startApiProcess, stopAllApiProcesses, type ApiProcess } from '../support/api-process';
import { anInvoice, newKey } from '../support/invoice.builder';
import { RetriesExhaustedError, RetryingClient, type OperationResult } from '../support/retrying-client';
import type { TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

const CREATE = '/v1/sales/invoices/create';
const TEST_TIMEOUT_MS = 60_000;
const HOOK_TIMEOUT_MS = 40_000;

interface InvoiceBody {
  id: string;
  orderId: string | null;
  sequence: number;
  number: string;
}

interface LogicalOperation {
  key: string;
  orderId: string;
  body: Record<string, unknown>;
  result?: OperationResult<InvoiceBody>;
  failure?: unknown;
}

/**
 * The API as production runs it (`node dist/apps/api/src/main.js`), SIGKILLed while clients
 * retry. Needs a current build: `npm run build`.
 */
describe('crash recovery of a real API process', () => {
  let db: Pool;
  /** The live API; replaced on restart, so clients read it through a getter. */
  let api: ApiProcess;

  beforeAll(async () => {
    db = testDatabasePool();
    api = await startApiProcess();
  }, HOOK_TIMEOUT_MS);

  afterAll(async () => {
    await stopAllApiProcesses();
    await db?.end();
  }, HOOK_TIMEOUT_MS);

  async function liveApi(): Promise<ApiProcess> {
    if (!api.running) api = await startApiProcess();
    return api;
  }

  function retryingClient(company: TestCompany): RetryingClient {
    return new RetryingClient({
      baseUrl: () => api.baseUrl,
      headers: company.auth,
      maxAttempts: 150,
      attemptTimeoutMs: 5_000,
      backoffBaseMs: 50,
      backoffMaxMs: 400,
      maxRetryAfterMs: 200,
    });
  }

  /** Gapless 1..count, one balanced entry per invoice, no key without its invoice; the API agrees. */
  async function expectConsistentBooks(company: TestCompany, count: number): Promise<Map<string, string>> {
    const invoices = await db.query<{
      id: string;
      order_id: string;
      sequence: string;
      number: string;
      gross: string;
    }>(
      `SELECT id, order_id, sequence, number, gross_total AS gross FROM invoices
        WHERE company_id = $1 ORDER BY sequence`,
      [company.companyId],
    );
    const sequences = Array.from({ length: count }, (_, index) => index + 1);
    expect(invoices.rows.map((row) => Number(row.sequence))).toEqual(sequences);
    expect(invoices.rows.map((row) => row.number)).toEqual(
      sequences.map((n) => `INV-${String(n).padStart(6, '0')}`),
    );
    const [counters] = (
      await db.query<{
        last_value: string | null;
        entries: number;
        invoices_without_one_entry: number;
        unbalanced: number;
        debit: string;
        credit: string;
        orphan_records: number;
      }>(
        `SELECT (SELECT last_value FROM document_sequences WHERE company_id = $1 AND series = 'INV') AS last_value,
                (SELECT count(*)::int FROM journal_entries WHERE company_id = $1) AS entries,
                (SELECT count(*)::int FROM invoices i WHERE i.company_id = $1
                   AND (SELECT count(*) FROM journal_entries e WHERE e.company_id = $1
                          AND e.source_type = 'invoice' AND e.source_id = i.id) <> 1) AS invoices_without_one_entry,
                (SELECT count(*)::int FROM (SELECT entry_id FROM journal_lines WHERE company_id = $1
                   GROUP BY entry_id HAVING sum(debit) <> sum(credit)) u) AS unbalanced,
                (SELECT coalesce(sum(debit), 0)::text FROM journal_lines WHERE company_id = $1) AS debit,
                (SELECT coalesce(sum(credit), 0)::text FROM journal_lines WHERE company_id = $1) AS credit,
                (SELECT count(*)::int FROM idempotency_records r
                  WHERE r.company_id = $1 AND r.response_status = 201
                   AND NOT EXISTS (SELECT 1 FROM invoices i WHERE i.company_id = $1
                                     AND i.id::text = r.response_body::jsonb ->> 'id')) AS orphan_records`,
        [company.companyId],
      )
    ).rows;
    const grossTotal = invoices.rows.reduce((sum, row) => sum + Number(row.gross), 0);
    expect({ ...counters, last_value: Number(counters.last_value) }).toEqual({
      last_value: count,
      entries: count,
      invoices_without_one_entry: 0,
      unbalanced: 0,
      debit: String(grossTotal),
      credit: String(grossTotal),
      orphan_records: 0,
    });

    const trialBalance = await fetch(`${api.baseUrl}/v1/ledger/trial-balance`, { headers: company.auth });
    expect(trialBalance.status).toBe(200);
    expect(((await trialBalance.json()) as { totals: unknown }).totals).toEqual([
      { currency: 'EUR', debitTotal: String(grossTotal), creditTotal: String(grossTotal), balanced: true },
    ]);
    return new Map(invoices.rows.map((row) => [row.order_id, row.id]));
  }

  async function storedRecords(companyId: string): Promise<Map<string, { status: number; body: string }>> {
    const { rows } = await db.query<{
      idempotency_key: string;
      response_status: number;
      response_body: string;
    }>(
      `SELECT idempotency_key, response_status, response_body FROM idempotency_records WHERE company_id = $1`,
      [companyId],
    );
    return new Map(
      rows.map((row) => [row.idempotency_key, { status: row.response_status, body: row.response_body }]),
    );
  }

  it(
    'after kill -9 and restart every logical operation has exactly one invoice, numbering is gapless and the ' +
      'trial balance is balanced',
    async () => {
      const company = await (await liveApi()).newCompany();
      const client = retryingClient(company);
      const operations: LogicalOperation[] = Array.from({ length: 60 }, (_, index) => {
        const orderId = `crash-order-${index + 1}-${randomUUID()}`;
        return {
          key: newKey('crash'),
          orderId,
          body: anInvoice()
            .withOrderId(orderId)
            .withLine({ unitPrice: 1000 + index })
            .build(),
        };
      });
      /** Completed operations after which the live API is SIGKILLed and a new one started. */
      const killAfter = [10, 35];
      const kills: Array<{ pid: number; status: unknown }> = [];
      let crashes: Promise<void> = Promise.resolve();
      let crashesScheduled = 0;
      let completed = 0;
      const crashAndRestart = async (): Promise<void> => {
        const victim = api;
        const status = await victim.kill('SIGKILL');
        kills.push({ pid: victim.pid, status });
        api = await startApiProcess();
      };

      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < operations.length) {
          const operation = operations[next];
          next += 1;
          try {
            operation.result = await client.post<InvoiceBody>(CREATE, operation.body, operation.key);
          } catch (error) {
            operation.failure = error instanceof RetriesExhaustedError ? error.message : error;
          }
          completed += 1;
          if (crashesScheduled < killAfter.length && completed >= killAfter[crashesScheduled]) {
            crashesScheduled += 1;
            crashes = crashes.then(crashAndRestart);
          }
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      await crashes;

      expect(kills).toEqual(
        killAfter.map(() => expect.objectContaining({ status: { code: null, signal: 'SIGKILL' } })),
      );
      expect(
        operations.filter((operation) => operation.failure !== undefined).map((op) => op.failure),
      ).toEqual([]);
      expect(operations.map((operation) => operation.result?.status)).toEqual(operations.map(() => 201));
      const interrupted = operations.filter((operation) =>
        operation.result?.attempts.some((attempt) => 'error' in attempt),
      );
      // The kills really cut requests short: some operations saw a network error and retried.
      expect(interrupted.length).toBeGreaterThan(0);

      const invoiceIdByOrder = await expectConsistentBooks(company, operations.length);
      const records = await storedRecords(company.companyId);
      expect(records.size).toBe(operations.length);
      for (const operation of operations) {
        const result = operation.result!;
        expect(result.body.id).toBe(invoiceIdByOrder.get(operation.orderId));
        expect(result.body.orderId).toBe(operation.orderId);
        // First execution or replay, the client holds exactly the stored answer.
        expect(records.get(operation.key)).toEqual({ status: 201, body: result.text });
      }

      const retries = await Promise.all(
        operations.map((operation) => client.post<InvoiceBody>(CREATE, operation.body, operation.key)),
      );
      expect(retries.map((retry) => [retry.status, retry.replayed, retry.text])).toEqual(
        operations.map((operation) => [201, true, operation.result!.text]),
      );
      await expectConsistentBooks(company, operations.length);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'replays a committed invoice whose response was lost, without issuing a second one',
    async () => {
      const live = await liveApi();
      const company = await live.newCompany();
      const key = newKey('lost-response');
      const orderId = `lost-response-${randomUUID()}`;
      const body = anInvoice().withOrderId(orderId).withLine().build();

      const connection = new AbortController();
      // Never read: whether or not it was on its way, the client gives up on this answer.
      const lostAnswer = fetch(`${live.baseUrl}${CREATE}`, {
        method: 'POST',
        headers: { ...company.auth, 'Content-Type': 'application/json', 'Idempotency-Key': key },
        body: JSON.stringify(body),
        signal: connection.signal,
      }).then(
        () => undefined,
        () => undefined,
      );
      const committedId = await waitForInvoice(company.companyId, orderId);
      connection.abort();
      await lostAnswer;

      const retry = await retryingClient(company).post<InvoiceBody>(CREATE, body, key);

      expect(retry.status).toBe(201);
      expect(retry.replayed).toBe(true);
      expect(retry.body.id).toBe(committedId);
      const invoiceIdByOrder = await expectConsistentBooks(company, 1);
      expect([...invoiceIdByOrder]).toEqual([[orderId, committedId]]);
      expect(await storedRecords(company.companyId)).toEqual(
        new Map([[key, { status: 201, body: retry.text }]]),
      );
    },
    TEST_TIMEOUT_MS,
  );

  async function waitForInvoice(companyId: string, orderId: string): Promise<string> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { rows } = await db.query<{ id: string }>(
        `SELECT id FROM invoices WHERE company_id = $1 AND order_id = $2`,
        [companyId, orderId],
      );
      if (rows[0]) return rows[0].id;
      if (Date.now() > deadline) throw new Error(`no invoice for ${orderId} within 10 s`);
      await new Promise((resolveDelay) => setTimeout(resolveDelay, 5));
    }
  }
});
