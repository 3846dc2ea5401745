import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { startApiProcess, stopAllApiProcesses, type ApiProcess } from '../support/api-process';
import { anInvoice, newKey } from '../support/invoice.builder';
import { RetriesExhaustedError, RetryingClient, type OperationResult } from '../support/retrying-client';
import type { TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

const BASE_INVOICES = 20;
const OPERATIONS = 60;

type Kind = 'invoice' | 'credit_note' | 'settlement' | 'purchase_invoice';

interface LogicalOperation {
  kind: Kind;
  path: string;
  key: string;
  body: Record<string, unknown>;
  result?: OperationResult<{ id: string }>;
  failure?: unknown;
}

const TABLE: Record<Kind, string> = {
  invoice: 'invoices',
  credit_note: 'credit_notes',
  settlement: 'settlements',
  purchase_invoice: 'purchase_invoices',
};

/**
 * The foundation's kill -9 test over every document type: a real API process is SIGKILLed
 * twice while retrying clients issue invoices, partial credit notes, settlements and purchase
 * invoices. Every logical operation must end with exactly one document, the one its client
 * was told about. Needs a current build: `npm run build`.
 */
describe('crash recovery with a mix of all document types', () => {
  let db: Pool;
  let api: ApiProcess;

  beforeAll(async () => {
    db = testDatabasePool();
    api = await startApiProcess();
  }, 40_000);

  afterAll(async () => {
    await stopAllApiProcesses();
    await db?.end();
  }, 40_000);

  it('one document per logical operation, gapless numbers and balanced books after two SIGKILLs', async () => {
    const company: TestCompany = await api.newCompany();
    const client = new RetryingClient({
      baseUrl: () => api.baseUrl,
      headers: company.auth,
      maxAttempts: 150,
      attemptTimeoutMs: 5_000,
      backoffBaseMs: 50,
      backoffMaxMs: 400,
      maxRetryAfterMs: 200,
    });

    // Invoices the credit notes and settlements work on: gross 12100 each.
    const base: string[] = [];
    for (let i = 0; i < BASE_INVOICES; i += 1) {
      const result = await client.post<{ id: string }>(
        '/v1/sales/invoices/create',
        anInvoice().withLine({ quantity: '1', unitPrice: 10000, vatRate: '21' }).build(),
        newKey('base'),
      );
      expect(result.status).toBe(201);
      base.push(result.body.id);
    }

    const operations: LogicalOperation[] = Array.from({ length: OPERATIONS }, (_, index) => {
      const target = base[index % BASE_INVOICES];
      switch (index % 4) {
        case 0:
          return {
            kind: 'invoice',
            path: '/v1/sales/invoices/create',
            key: newKey('mix'),
            body: anInvoice()
              .withOrderId(`mix-order-${index}-${randomUUID()}`)
              .withLine({ unitPrice: 100 + index })
              .build(),
          };
        case 1:
          return {
            kind: 'credit_note',
            path: '/v1/sales/credit-notes/create',
            key: newKey('mix'),
            body: {
              invoiceId: target,
              reason: 'other',
              lines: [{ description: `partial ${index}`, quantity: '1', unitPrice: 100, vatRate: '21' }],
            },
          };
        case 2:
          return {
            kind: 'settlement',
            path: '/v1/settlements/create',
            key: newKey('mix'),
            body: {
              payoutId: `po_mix_${index}_${randomUUID()}`,
              currency: 'EUR',
              paidAt: '2026-11-30T10:00:00Z',
              feeAmount: 10,
              allocations: [{ invoiceId: target, amount: 1000 }],
            },
          };
        default:
          return {
            kind: 'purchase_invoice',
            path: '/v1/purchases/invoices/create',
            key: newKey('mix'),
            body: {
              supplier: { name: `Supplier ${index}`, countryCode: 'LT' },
              documentNumber: `SUP-${index}-${randomUUID().slice(0, 8)}`,
              issueDate: '2026-11-30',
              lines: [{ description: 'Paper', quantity: '1', unitPrice: 2000 + index, vatRate: '21' }],
            },
          };
      }
    });

    const killAfter = [10, 35];
    let crashes: Promise<void> = Promise.resolve();
    let scheduled = 0;
    let completed = 0;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < operations.length) {
        const operation = operations[next];
        next += 1;
        try {
          operation.result = await client.post<{ id: string }>(operation.path, operation.body, operation.key);
        } catch (error) {
          operation.failure = error instanceof RetriesExhaustedError ? error.message : error;
        }
        completed += 1;
        if (scheduled < killAfter.length && completed >= killAfter[scheduled]) {
          scheduled += 1;
          crashes = crashes.then(async () => {
            expect(await api.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
            api = await startApiProcess();
          });
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    await crashes;

    expect(operations.filter((op) => op.failure !== undefined).map((op) => op.failure)).toEqual([]);
    expect(operations.map((op) => op.result?.status)).toEqual(operations.map(() => 201));

    // Exactly one document per logical operation, and it is the one the client holds.
    for (const kind of Object.keys(TABLE) as Kind[]) {
      const mine = operations.filter((op) => op.kind === kind);
      const { rows } = await db.query<{ id: string }>(`SELECT id FROM ${TABLE[kind]} WHERE company_id = $1`, [
        company.companyId,
      ]);
      const expected = mine.map((op) => op.result!.body.id);
      if (kind === 'invoice') expected.push(...base);
      expect(rows.map((row) => row.id).sort()).toEqual(expected.sort());
    }
    const { rows: records } = await db.query<{ idempotency_key: string; response_body: string }>(
      `SELECT idempotency_key, response_body FROM idempotency_records WHERE company_id = $1 AND idempotency_key LIKE 'mix-%'`,
      [company.companyId],
    );
    const stored = new Map(records.map((row) => [row.idempotency_key, row.response_body]));
    for (const op of operations) expect(stored.get(op.key)).toBe(op.result!.text);

    // Gapless numbering of both numbered series.
    const { rows: series } = await db.query<{ series: string; count: number; max: number }>(
      `SELECT series, count(*)::int AS count, max(sequence)::int AS max FROM
         (SELECT series, sequence FROM invoices WHERE company_id = $1
          UNION ALL SELECT series, sequence FROM credit_notes WHERE company_id = $1) d
        GROUP BY series ORDER BY series`,
      [company.companyId],
    );
    expect(series).toEqual([
      { series: 'CN', count: OPERATIONS / 4, max: OPERATIONS / 4 },
      { series: 'INV', count: BASE_INVOICES + OPERATIONS / 4, max: BASE_INVOICES + OPERATIONS / 4 },
    ]);

    // Running totals agree with the documents; one balanced entry per document.
    const { rows: drift } = await db.query(
      `SELECT id FROM invoices i WHERE company_id = $1
          AND (credited_total <> (SELECT coalesce(sum(gross_total), 0) FROM credit_notes c WHERE c.invoice_id = i.id)
               OR paid_total <> (SELECT coalesce(sum(amount), 0) FROM settlement_allocations a WHERE a.invoice_id = i.id))`,
      [company.companyId],
    );
    expect(drift).toEqual([]);
    const { rows: entries } = await db.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM journal_entries WHERE company_id = $1`,
      [company.companyId],
    );
    expect(entries[0].count).toBe(BASE_INVOICES + OPERATIONS);
    const trialBalance = await fetch(`${api.baseUrl}/v1/ledger/trial-balance`, { headers: company.auth });
    const totals = ((await trialBalance.json()) as { totals: Array<{ balanced: boolean }> }).totals;
    expect(totals).toEqual([expect.objectContaining({ currency: 'EUR', balanced: true })]);
  }, 90_000);
});
