import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { Response } from 'supertest';
import { anInvoice, newKey } from '../support/invoice.builder';
import { aSettlement } from '../support/settlement.builder';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

const CREATE = '/v1/settlements/create';
const OPERATION = 'settlements.create';
const REUSED_DETAIL = 'Idempotency-Key was already used with a different request payload.';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The default invoice builder line: 2 × 50.00 at 21 % → gross 12100. */
const DEFAULT_GROSS = 12_100;

interface InvoiceBody {
  id: string;
  number: string;
  currency: string;
  grossTotal: number;
  creditedTotal: number;
  paidTotal: number;
}

interface SettlementBody {
  id: string;
  object: string;
  payoutId: string;
  currency: string;
  paidAt: string;
  feeAmount: number;
  allocatedTotal: number;
  netAmount: number;
  allocations: Array<{ invoiceId: string; invoiceNumber: string; amount: number }>;
  createdAt: string;
}

interface JournalEntryBody {
  sourceType: string;
  sourceId: string;
  memo: string;
  postedAt: string;
  entryDate: string;
  currency: string;
  lines: Array<{ account: string; debit: number; credit: number }>;
}

/** What a company's settlement activity left in the database. */
interface SettlementBooks {
  settlements: Array<{ id: string; payout_id: string; fee_amount: number; allocated_total: number }>;
  allocations: Array<{ settlement_id: string; invoice_id: string; amount: number }>;
  settlementEntries: string[];
  unbalancedEntries: number;
  paidTotals: Record<string, number>;
  records: Array<{ idempotency_key: string; response_status: number; response_body: string }>;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function problemOf(response: Response, status: number, code: string): Record<string, unknown> {
  const body = JSON.parse(response.text) as Record<string, unknown>;
  expect({ status: response.status, code: body.code }).toEqual({ status, code });
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(body.status).toBe(status);
  return body;
}

function byInvoiceId<T extends { invoiceId: string }>(allocations: T[]): T[] {
  return [...allocations].sort((a, b) => (a.invoiceId < b.invoiceId ? -1 : 1));
}

let db: Pool;

beforeAll(() => {
  db = testDatabasePool();
});

afterAll(async () => {
  await db?.end();
});

function post(app: TestApp, company: TestCompany, key: string | undefined, body: object) {
  const request = app.http.post(CREATE).set(company.auth);
  if (key !== undefined) request.set('Idempotency-Key', key);
  return request.send(body);
}

async function issueInvoice(
  app: TestApp,
  company: TestCompany,
  body: Record<string, unknown> = anInvoice().withLine().build(),
): Promise<InvoiceBody> {
  const response = await app.http
    .post('/v1/sales/invoices/create')
    .set(company.auth)
    .set('Idempotency-Key', newKey('invoice'))
    .send(body);
  expect(response.status).toBe(201);
  return response.body as InvoiceBody;
}

async function invoiceOf(app: TestApp, company: TestCompany, invoiceId: string): Promise<InvoiceBody> {
  const response = await app.http.get(`/v1/sales/invoices/${invoiceId}`).set(company.auth);
  expect(response.status).toBe(200);
  return response.body as InvoiceBody;
}

async function booksOf(company: TestCompany): Promise<SettlementBooks> {
  const id = company.companyId;
  const [settlements, allocations, entries, unbalanced, invoices, records] = await Promise.all([
    db.query<SettlementBooks['settlements'][number]>(
      `SELECT id, payout_id, fee_amount::int, allocated_total::int FROM settlements
        WHERE company_id = $1 ORDER BY created_at, id`,
      [id],
    ),
    db.query<SettlementBooks['allocations'][number]>(
      `SELECT settlement_id, invoice_id, amount::int FROM settlement_allocations
        WHERE company_id = $1 ORDER BY settlement_id, invoice_id`,
      [id],
    ),
    db.query<{ source_id: string }>(
      `SELECT source_id FROM journal_entries WHERE company_id = $1 AND source_type = 'settlement' ORDER BY seq`,
      [id],
    ),
    db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT entry_id FROM journal_lines WHERE company_id = $1
          GROUP BY entry_id HAVING sum(debit) <> sum(credit)) u`,
      [id],
    ),
    db.query<{ id: string; paid_total: number }>(
      `SELECT id, paid_total::int FROM invoices WHERE company_id = $1`,
      [id],
    ),
    db.query<SettlementBooks['records'][number]>(
      `SELECT idempotency_key, response_status, response_body FROM idempotency_records
        WHERE company_id = $1 AND operation = $2 ORDER BY created_at, idempotency_key`,
      [id, OPERATION],
    ),
  ]);
  return {
    settlements: settlements.rows,
    allocations: allocations.rows,
    settlementEntries: entries.rows.map((row) => row.source_id),
    unbalancedEntries: unbalanced.rows[0].n,
    paidTotals: Object.fromEntries(invoices.rows.map((row) => [row.id, row.paid_total])),
    records: records.rows,
  };
}

/** No settlement, allocation, posting, paid amount or key record: as if the request never came. */
async function expectNoSettlementEffects(company: TestCompany, records: number = 0): Promise<void> {
  const books = await booksOf(company);
  expect(books.settlements).toEqual([]);
  expect(books.allocations).toEqual([]);
  expect(books.settlementEntries).toEqual([]);
  expect(Object.values(books.paidTotals).every((paid) => paid === 0)).toBe(true);
  expect(books.records).toHaveLength(records);
}

async function trialBalanceTotals(app: TestApp, company: TestCompany): Promise<unknown> {
  const response = await app.http.get('/v1/ledger/trial-balance').set(company.auth);
  expect(response.status).toBe(200);
  return (response.body as { totals: unknown }).totals;
}

describe('settlements', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  function create(company: TestCompany, key: string | undefined, body: object) {
    return post(t, company, key, body);
  }

  async function settle(company: TestCompany, body: object): Promise<Response & { body: SettlementBody }> {
    const response = await create(company, newKey(), body);
    expect(response.status).toBe(201);
    return response;
  }

  async function settlementEntries(company: TestCompany): Promise<JournalEntryBody[]> {
    const response = await t.http.get('/v1/ledger/entries?limit=100').set(company.auth);
    expect(response.status).toBe(200);
    return (response.body as { data: JournalEntryBody[] }).data.filter(
      (entry) => entry.sourceType === 'settlement',
    );
  }

  describe('POST /v1/settlements/create', () => {
    it('records the payout: documented shape, stored rows, paid totals and one balanced posting', async () => {
      const company = await t.newCompany();
      const consulting = await issueInvoice(t, company);
      const books = await issueInvoice(
        t,
        company,
        anInvoice().withLine({ description: 'Books', quantity: '1', unitPrice: 3000, vatRate: '0' }).build(),
      );
      const body = aSettlement()
        .forPayout('po_1NxY')
        .withFee(150)
        .allocating(consulting.id, DEFAULT_GROSS)
        .allocating(books.id, 1000)
        .build();
      const before = new Date();

      const response = await create(company, newKey(), body);

      const after = new Date();
      expect(response.status).toBe(201);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.headers.location).toBe(`/v1/settlements/${response.body.id}`);
      const settlement = JSON.parse(response.text) as SettlementBody;
      expect(settlement).toStrictEqual({
        id: expect.stringMatching(UUID),
        object: 'settlement',
        payoutId: 'po_1NxY',
        currency: 'EUR',
        paidAt: '2026-11-30T10:00:00.000Z',
        feeAmount: 150,
        allocatedTotal: 13_100,
        netAmount: 12_950,
        allocations: byInvoiceId([
          { invoiceId: consulting.id, invoiceNumber: consulting.number, amount: DEFAULT_GROSS },
          { invoiceId: books.id, invoiceNumber: books.number, amount: 1000 },
        ]),
        metadata: {},
        createdAt: expect.stringMatching(ISO_INSTANT),
      });
      const createdAt = Date.parse(settlement.createdAt);
      expect(createdAt).toBeGreaterThanOrEqual(before.getTime());
      expect(createdAt).toBeLessThanOrEqual(after.getTime());

      const { rows } = await db.query(
        `SELECT company_id, payout_id, currency, paid_at, fee_amount::int, allocated_total::int, created_at
           FROM settlements WHERE id = $1`,
        [settlement.id],
      );
      expect(rows).toEqual([
        {
          company_id: company.companyId,
          payout_id: 'po_1NxY',
          currency: 'EUR',
          paid_at: new Date('2026-11-30T10:00:00Z'),
          fee_amount: 150,
          allocated_total: 13_100,
          created_at: new Date(settlement.createdAt),
        },
      ]);
      const { rows: allocations } = await db.query(
        `SELECT invoice_id, company_id, amount::int FROM settlement_allocations
          WHERE settlement_id = $1 ORDER BY invoice_id`,
        [settlement.id],
      );
      expect(allocations).toEqual(
        settlement.allocations.map((allocation) => ({
          invoice_id: allocation.invoiceId,
          company_id: company.companyId,
          amount: allocation.amount,
        })),
      );

      expect(await invoiceOf(t, company, consulting.id)).toMatchObject({
        grossTotal: DEFAULT_GROSS,
        paidTotal: DEFAULT_GROSS,
      });
      expect(await invoiceOf(t, company, books.id)).toMatchObject({ grossTotal: 3000, paidTotal: 1000 });

      expect(await settlementEntries(company)).toEqual([
        {
          id: expect.stringMatching(UUID),
          object: 'journal_entry',
          currency: 'EUR',
          sourceType: 'settlement',
          sourceId: settlement.id,
          memo: 'Settlement of payout po_1NxY',
          postedAt: settlement.createdAt,
          entryDate: settlement.paidAt.slice(0, 10),
          lines: [
            { account: 'bank', debit: 12_950, credit: 0 },
            { account: 'payment_fees', debit: 150, credit: 0 },
            { account: 'accounts_receivable', debit: 0, credit: 13_100 },
          ],
        },
      ]);
      const trialBalance = await t.http.get('/v1/ledger/trial-balance').set(company.auth);
      expect(trialBalance.body).toMatchObject({
        totals: [{ currency: 'EUR', debitTotal: '28200', creditTotal: '28200', balanced: true }],
      });
      expect((trialBalance.body as { data: unknown[] }).data).toEqual(
        expect.arrayContaining([
          {
            account: 'accounts_receivable',
            currency: 'EUR',
            debitTotal: '15100',
            creditTotal: '13100',
            balance: '2000',
          },
          { account: 'bank', currency: 'EUR', debitTotal: '12950', creditTotal: '0', balance: '12950' },
          { account: 'payment_fees', currency: 'EUR', debitTotal: '150', creditTotal: '0', balance: '150' },
        ]),
      );
      expect((await booksOf(company)).unbalancedEntries).toBe(0);
    });

    it('feeAmount defaults to 0 (no fee line); a fee equal to the allocations posts no bank line', async () => {
      const company = await t.newCompany();
      const first = await issueInvoice(t, company);
      const second = await issueInvoice(t, company);

      const noFee = (await settle(company, aSettlement().allocating(first.id, 5000).build())).body;
      const allFee = (await settle(company, aSettlement().withFee(2000).allocating(second.id, 2000).build()))
        .body;

      expect(noFee).toMatchObject({ feeAmount: 0, allocatedTotal: 5000, netAmount: 5000 });
      expect(allFee).toMatchObject({ feeAmount: 2000, allocatedTotal: 2000, netAmount: 0 });
      expect((await settlementEntries(company)).map((entry) => entry.lines)).toEqual([
        [
          { account: 'bank', debit: 5000, credit: 0 },
          { account: 'accounts_receivable', debit: 0, credit: 5000 },
        ],
        [
          { account: 'payment_fees', debit: 2000, credit: 0 },
          { account: 'accounts_receivable', debit: 0, credit: 2000 },
        ],
      ]);
      expect(await trialBalanceTotals(t, company)).toEqual([
        {
          currency: 'EUR',
          debitTotal: String(2 * DEFAULT_GROSS + 7000),
          creditTotal: String(2 * DEFAULT_GROSS + 7000),
          balanced: true,
        },
      ]);
    });

    it('partial payments add up to the gross; one unit more is 422 naming the invoice and amounts', async () => {
      const company = await t.newCompany();
      const invoice = await issueInvoice(t, company);

      await settle(company, aSettlement().allocating(invoice.id, 5000).build());
      await settle(
        company,
        aSettlement()
          .allocating(invoice.id, DEFAULT_GROSS - 5000)
          .build(),
      );
      const overpaid = await create(company, newKey(), aSettlement().allocating(invoice.id, 1).build());

      const problem = problemOf(overpaid, 422, 'allocation_exceeds_outstanding');
      expect(problem.detail).toBe(
        `Allocation of 1 to invoice ${invoice.number} (${invoice.id}) exceeds its outstanding amount 0 ` +
          `(gross ${DEFAULT_GROSS} − credited 0 − paid ${DEFAULT_GROSS}).`,
      );
      expect(await invoiceOf(t, company, invoice.id)).toMatchObject({ paidTotal: DEFAULT_GROSS });
      expect((await booksOf(company)).settlements).toHaveLength(2);
    });

    it('credited amounts are not outstanding: gross − credited − paid bounds an allocation', async () => {
      const company = await t.newCompany();
      const invoice = await issueInvoice(t, company);
      // Stands in for a credit note of 2100 (running totals are the columns a credit note changes).
      await db.query('UPDATE invoices SET credited_total = 2100 WHERE id = $1', [invoice.id]);

      const rejected = await create(company, newKey(), aSettlement().allocating(invoice.id, 10_001).build());
      expect(problemOf(rejected, 422, 'allocation_exceeds_outstanding').detail).toContain(
        'exceeds its outstanding amount 10000 (gross 12100 − credited 2100 − paid 0)',
      );
      const accepted = await settle(company, aSettlement().allocating(invoice.id, 10_000).build());
      expect(accepted.body.allocatedTotal).toBe(10_000);
      expect(await invoiceOf(t, company, invoice.id)).toMatchObject({
        creditedTotal: 2100,
        paidTotal: 10_000,
      });
    });

    it('paidAt is stored as an instant and answered in UTC with milliseconds', async () => {
      const company = await t.newCompany();
      const invoice = await issueInvoice(t, company);

      const { body } = await settle(
        company,
        aSettlement().with({ paidAt: '2026-12-01T01:30:00.25+02:00' }).allocating(invoice.id, 100).build(),
      );

      expect(body.paidAt).toBe('2026-11-30T23:30:00.250Z');
      const { rows } = await db.query('SELECT paid_at FROM settlements WHERE id = $1', [body.id]);
      expect(rows).toEqual([{ paid_at: new Date('2026-11-30T23:30:00.250Z') }]);
    });
  });

  describe('GET /v1/settlements', () => {
    it('GET /v1/settlements/{id} returns byte-identical JSON to the create response', async () => {
      const company = await t.newCompany();
      const first = await issueInvoice(t, company);
      const second = await issueInvoice(t, company);
      const created = await settle(
        company,
        aSettlement().withFee(99).allocating(second.id, 700).allocating(first.id, 300).build(),
      );

      const fetched = await t.http.get(`/v1/settlements/${created.body.id}`).set(company.auth);

      expect(fetched.status).toBe(200);
      expect(fetched.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(fetched.text).toBe(created.text);
    });

    it("another company's settlement, an unknown id and a malformed id are all 404 not_found", async () => {
      const owner = await t.newCompany();
      const other = await t.newCompany();
      const invoice = await issueInvoice(t, owner);
      const { body } = await settle(owner, aSettlement().allocating(invoice.id, 100).build());

      for (const [company, id] of [
        [other, body.id],
        [owner, randomUUID()],
        [owner, 'not-an-id'],
      ] as const) {
        const response = await t.http.get(`/v1/settlements/${id}`).set(company.auth);
        problemOf(response, 404, 'not_found');
      }
      const list = await t.http.get('/v1/settlements').set(other.auth);
      expect(list.body).toEqual({ object: 'list', data: [], hasMore: false });
    });

    it('lists in creation order and pages with startingAfter: no duplicates, nothing missing', async () => {
      const company = await t.newCompany();
      const invoice = await issueInvoice(t, company);
      const created: SettlementBody[] = [];
      for (let index = 0; index < 5; index += 1) {
        created.push(
          (
            await settle(
              company,
              aSettlement()
                .allocating(invoice.id, 100 + index)
                .build(),
            )
          ).body,
        );
      }

      const pages: Array<{ object: string; data: SettlementBody[]; hasMore: boolean }> = [];
      let cursor: string | undefined;
      do {
        const response = await t.http
          .get(`/v1/settlements?limit=2${cursor === undefined ? '' : `&startingAfter=${cursor}`}`)
          .set(company.auth);
        expect(response.status).toBe(200);
        pages.push(response.body);
        cursor = pages.at(-1)?.data.at(-1)?.id;
      } while (pages.at(-1)?.hasMore === true && pages.length < 5);

      expect(pages.map((page) => [page.object, page.data.length, page.hasMore])).toEqual([
        ['list', 2, true],
        ['list', 2, true],
        ['list', 1, false],
      ]);
      expect(pages.flatMap((page) => page.data)).toEqual(created);
      const all = await t.http.get('/v1/settlements').set(company.auth);
      expect(all.body).toEqual({ object: 'list', data: created, hasMore: false });
      const afterUnknown = await t.http
        .get(`/v1/settlements?startingAfter=${randomUUID()}`)
        .set(company.auth);
      expect(afterUnknown.body).toEqual({ object: 'list', data: [], hasMore: false });
    });
  });

  describe('idempotency', () => {
    it('a retry with the same key and body replays byte for byte; the books change once', async () => {
      const company = await t.newCompany();
      const invoice = await issueInvoice(t, company);
      const key = newKey();
      const body = aSettlement().withFee(150).allocating(invoice.id, 6000).build();

      const first = await create(company, key, body);
      const replay = await create(company, key, body);

      expect(first.status).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.headers.location).toBe(first.headers.location);
      expect(replay.text).toBe(first.text);
      const books = await booksOf(company);
      expect(books.settlements).toHaveLength(1);
      expect(books.settlementEntries).toEqual([first.body.id]);
      expect(books.paidTotals[invoice.id]).toBe(6000);
      expect(books.records).toEqual([
        { idempotency_key: key, response_status: 201, response_body: first.text },
      ]);
    });

    it('another spelling of the same request is a replay: order, offset, id case, explicit default fee', async () => {
      const company = await t.newCompany();
      const first = await issueInvoice(t, company);
      const second = await issueInvoice(t, company);
      const key = newKey();
      const original = aSettlement()
        .forPayout('po_spelling')
        .allocating(first.id, 1000)
        .allocating(second.id, 2000)
        .build();
      const respelled = aSettlement()
        .forPayout('po_spelling')
        .with({ paidAt: '2026-11-30T12:00:00.000+02:00' })
        .withFee(0)
        .allocating(second.id.toUpperCase(), 2000)
        .allocating(first.id, 1000)
        .build();

      const created = await create(company, key, original);
      const replay = await create(company, key, respelled);

      expect(created.status).toBe(201);
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.text).toBe(created.text);
      expect((await booksOf(company)).settlements).toHaveLength(1);
    });

    it.each<[string, (invoiceId: string) => Record<string, unknown>]>([
      ['another amount', (id) => aSettlement().forPayout('po_reuse').allocating(id, 6001).build()],
      ['another fee', (id) => aSettlement().forPayout('po_reuse').withFee(1).allocating(id, 6000).build()],
      [
        'another paidAt',
        (id) =>
          aSettlement()
            .forPayout('po_reuse')
            .with({ paidAt: '2026-11-30T10:00:01Z' })
            .allocating(id, 6000)
            .build(),
      ],
      ['another payoutId', (id) => aSettlement().forPayout('po_other').allocating(id, 6000).build()],
    ])('%s under the same key → 422 idempotency_key_reused; nothing runs', async (_name, changed) => {
      const company = await t.newCompany();
      const invoice = await issueInvoice(t, company);
      const key = newKey();
      const original = aSettlement().forPayout('po_reuse').allocating(invoice.id, 6000).build();
      const first = await create(company, key, original);
      expect(first.status).toBe(201);
      const booksBefore = await booksOf(company);

      const reused = await create(company, key, changed(invoice.id));

      expect(problemOf(reused, 422, 'idempotency_key_reused').detail).toBe(REUSED_DETAIL);
      expect(reused.headers['idempotent-replayed']).toBeUndefined();
      expect(await booksOf(company)).toEqual(booksBefore);
      const replay = await create(company, key, original);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.text).toBe(first.text);
    });

    it('the same payoutId under a new key → 409 payout_already_settled naming the settlement, replayed under that key', async () => {
      const company = await t.newCompany();
      const invoice = await issueInvoice(t, company);
      const keyA = newKey('a');
      const keyB = newKey('b');
      const first = await create(
        company,
        keyA,
        aSettlement().forPayout('po_twice').allocating(invoice.id, 100).build(),
      );
      expect(first.status).toBe(201);
      const second = aSettlement().forPayout('po_twice').withFee(5).allocating(invoice.id, 200).build();

      const rejected = await create(company, keyB, second);
      const replay = await create(company, keyB, second);

      const problem = problemOf(rejected, 409, 'payout_already_settled');
      expect(problem.existingSettlementId).toBe(first.body.id);
      expect(problem.detail).toBe(`Payout po_twice is already settled by settlement ${first.body.id}.`);
      expect(rejected.headers['idempotent-replayed']).toBeUndefined();
      expect(replay.status).toBe(409);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.text).toBe(rejected.text);
      const books = await booksOf(company);
      expect(books.settlements.map((settlement) => settlement.id)).toEqual([first.body.id]);
      expect(books.paidTotals[invoice.id]).toBe(100);
      expect(books.settlementEntries).toEqual([first.body.id]);
      expect(books.records).toEqual([
        { idempotency_key: keyA, response_status: 201, response_body: first.text },
        { idempotency_key: keyB, response_status: 409, response_body: rejected.text },
      ]);
    });
  });

  describe('business rejections are stored and replayed; they change nothing', () => {
    it.each<[string, (invoice: InvoiceBody) => Record<string, unknown>, string]>([
      [
        'an allocation above the outstanding amount',
        (invoice) =>
          aSettlement()
            .allocating(invoice.id, DEFAULT_GROSS + 1)
            .build(),
        `Allocation of ${DEFAULT_GROSS + 1} to invoice INV-000001`,
      ],
      [
        'an allocation in another currency than the invoice',
        (invoice) => aSettlement().with({ currency: 'USD' }).allocating(invoice.id, 100).build(),
        'is in EUR; a USD settlement cannot pay it.',
      ],
    ])('%s → 422 allocation_exceeds_outstanding', async (_name, body, detail) => {
      const company = await t.newCompany();
      const invoice = await issueInvoice(t, company);
      const key = newKey();
      const request = body(invoice);

      const rejected = await create(company, key, request);
      const replay = await create(company, key, request);

      expect(problemOf(rejected, 422, 'allocation_exceeds_outstanding').detail).toContain(detail);
      expect(replay.status).toBe(422);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.text).toBe(rejected.text);
      await expectNoSettlementEffects(company, 1);
      expect((await booksOf(company)).records).toEqual([
        { idempotency_key: key, response_status: 422, response_body: rejected.text },
      ]);
    });

    it('a valid allocation next to an excessive one is rolled back with it', async () => {
      const company = await t.newCompany();
      const fine = await issueInvoice(t, company);
      const small = await issueInvoice(
        t,
        company,
        anInvoice().withLine({ quantity: '1', unitPrice: 500, vatRate: '0' }).build(),
      );

      const rejected = await create(
        company,
        newKey(),
        aSettlement().allocating(fine.id, 1000).allocating(small.id, 501).build(),
      );

      expect(problemOf(rejected, 422, 'allocation_exceeds_outstanding').detail).toContain(small.number);
      await expectNoSettlementEffects(company, 1);
    });

    it('allocations whose total leaves the safe integer range → 422 amount_out_of_range', async () => {
      const company = await t.newCompany();
      // 11 invoices of 9 × 10^14 each: every allocation is valid, their sum (9.9 × 10^15) is not a safe integer.
      const huge = anInvoice()
        .withLine({ quantity: '900', unitPrice: 1_000_000_000_000, vatRate: '0' })
        .build();
      const invoices: InvoiceBody[] = [];
      for (let index = 0; index < 11; index += 1) invoices.push(await issueInvoice(t, company, huge));
      const body = aSettlement();
      for (const invoice of invoices) body.allocating(invoice.id, invoice.grossTotal);

      const rejected = await create(company, newKey(), body.build());

      expect(problemOf(rejected, 422, 'amount_out_of_range').detail).toContain(
        'allocated total 9900000000000000',
      );
      await expectNoSettlementEffects(company, 1);
    });

    it("another company's invoice, or an unknown one → 404 not_found, stored and replayed", async () => {
      const company = await t.newCompany();
      const other = await t.newCompany();
      const own = await issueInvoice(t, company);
      const foreign = await issueInvoice(t, other);

      for (const missingId of [foreign.id, randomUUID()]) {
        const key = newKey();
        const body = aSettlement().allocating(own.id, 100).allocating(missingId, 100).build();
        const rejected = await create(company, key, body);
        const replay = await create(company, key, body);

        expect(problemOf(rejected, 404, 'not_found').detail).toBe(`No invoice ${missingId} exists.`);
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.text).toBe(rejected.text);
      }
      await expectNoSettlementEffects(company, 2);
      expect((await invoiceOf(t, other, foreign.id)).paidTotal).toBe(0);
    });
  });

  describe('validation → 400 validation_failed, nothing stored, the key stays usable', () => {
    const invoiceId = randomUUID();
    const valid = () => aSettlement().allocating(invoiceId, 1000);

    it.each<[string, Record<string, unknown>, string]>([
      ['feeAmount above the sum of allocations', valid().withFee(1001).build(), 'feeAmount'],
      ['the same invoice twice', valid().allocating(invoiceId, 5).build(), 'allocations'],
      [
        'the same invoice twice, spelled in two cases',
        valid().allocating(invoiceId.toUpperCase(), 5).build(),
        'allocations',
      ],
      ['paidAt without a time', valid().with({ paidAt: '2026-11-30' }).build(), 'paidAt'],
      ['paidAt without an offset', valid().with({ paidAt: '2026-11-30T10:00:00' }).build(), 'paidAt'],
      ['paidAt on 30 February', valid().with({ paidAt: '2026-02-30T10:00:00Z' }).build(), 'paidAt'],
      ['paidAt at 24:00', valid().with({ paidAt: '2026-11-30T24:00:00Z' }).build(), 'paidAt'],
      ['paidAt with microseconds', valid().with({ paidAt: '2026-11-30T10:00:00.123456Z' }).build(), 'paidAt'],
      ['paidAt as a number', valid().with({ paidAt: 1_764_496_800_000 }).build(), 'paidAt'],
      ['paidAt as prose', valid().with({ paidAt: 'yesterday' }).build(), 'paidAt'],
      ['no allocations', valid().with({ allocations: [] }).build(), 'allocations'],
      [
        '101 allocations',
        valid()
          .with({ allocations: Array.from({ length: 101 }, () => ({ invoiceId: randomUUID(), amount: 1 })) })
          .build(),
        'allocations',
      ],
      [
        'an amount of 0',
        valid()
          .with({ allocations: [{ invoiceId, amount: 0 }] })
          .build(),
        'allocations[0].amount',
      ],
      [
        'an amount above 10^15',
        valid()
          .with({ allocations: [{ invoiceId, amount: 1e15 + 1 }] })
          .build(),
        'allocations[0].amount',
      ],
      ['a fractional fee', valid().withFee(1.5).build(), 'feeAmount'],
      [
        'a fee above 10^12',
        valid()
          .withFee(1e12 + 1)
          .with({ allocations: [{ invoiceId, amount: 1e15 }] })
          .build(),
        'feeAmount',
      ],
      [
        'an invoiceId that is no id',
        valid()
          .with({ allocations: [{ invoiceId: 'INV-000001', amount: 1 }] })
          .build(),
        'allocations[0].invoiceId',
      ],
      ['a payoutId with a space', valid().forPayout('po 1').build(), 'payoutId'],
      ['an empty payoutId', valid().forPayout('').build(), 'payoutId'],
      ['a payoutId of 256 characters', valid().forPayout('p'.repeat(256)).build(), 'payoutId'],
      ['no payoutId', valid().without('payoutId').build(), 'payoutId'],
      ['a currency without a minor unit', valid().with({ currency: 'XAU' }).build(), 'currency'],
      ['an unknown field', valid().with({ memo: 'hello' }).build(), 'memo'],
    ])('%s', async (_name, body, field) => {
      const company = await t.newCompany();
      const key = newKey();

      const refused = await create(company, key, body);

      const problem = problemOf(refused, 400, 'validation_failed');
      expect(problem.errors).toEqual(expect.arrayContaining([{ field, message: expect.any(String) }]));
      await expectNoSettlementEffects(company);
    });

    it('a missing Idempotency-Key → 400 idempotency_key_missing; a refused body leaves the key usable', async () => {
      const company = await t.newCompany();
      const invoice = await issueInvoice(t, company);
      const body = aSettlement().allocating(invoice.id, 1000).build();
      problemOf(await create(company, undefined, body), 400, 'idempotency_key_missing');
      const key = newKey();
      problemOf(await create(company, key, { ...body, feeAmount: 1001 }), 400, 'validation_failed');
      await expectNoSettlementEffects(company);

      const corrected = await create(company, key, body);

      expect(corrected.status).toBe(201);
      expect(corrected.headers['idempotent-replayed']).toBeUndefined();
      expect((await booksOf(company)).records).toHaveLength(1);
    });
  });

  describe('OpenAPI', () => {
    it('documents the three routes, the Idempotency-Key header and the body schema', async () => {
      const response = await t.http.get('/docs/openapi.json');
      expect(response.status).toBe(200);
      const document = response.body as {
        paths: Record<string, Record<string, { parameters?: unknown[]; responses: Record<string, unknown> }>>;
        components: { schemas: Record<string, { required?: string[]; properties: Record<string, unknown> }> };
      };

      const create = document.paths['/v1/settlements/create']?.post;
      expect(create.parameters).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: true }),
        ]),
      );
      expect(Object.keys(create.responses)).toEqual(
        expect.arrayContaining(['201', '400', '404', '409', '422']),
      );
      expect(create.responses['409']).toMatchObject({
        description: expect.stringContaining('payout_already_settled'),
      });
      expect(create.responses['422']).toMatchObject({
        description: expect.stringContaining('allocation_exceeds_outstanding'),
      });
      expect(document.paths['/v1/settlements/{id}']?.get).toBeDefined();
      expect(document.paths['/v1/settlements']?.get).toBeDefined();
      const schema = document.components.schemas.RecordSettlementDto;
      expect([...(schema.required ?? [])].sort()).toEqual(['allocations', 'currency', 'paidAt', 'payoutId']);
      expect(schema.properties.paidAt).toMatchObject({ type: 'string', format: 'date-time' });
      expect(schema.properties.feeAmount).toMatchObject({ default: 0, minimum: 0 });
    });
  });

  describe('concurrency', () => {
    it('10 parallel settlements of 30 % of one invoice: 3 commit, 7 are 422; never overpaid, books balanced', async () => {
      const company = await t.newCompany();
      const invoice = await issueInvoice(t, company);
      const share = Math.round(DEFAULT_GROSS * 0.3);
      const requests = Array.from({ length: 10 }, () => ({
        key: newKey(),
        body: aSettlement().withFee(10).allocating(invoice.id, share).build(),
      }));

      const answers = await Promise.all(requests.map(({ key, body }) => create(company, key, body)));

      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses).toEqual([201, 201, 201, 422, 422, 422, 422, 422, 422, 422]);
      for (const answer of answers.filter((response) => response.status === 422)) {
        expect(JSON.parse(answer.text)).toMatchObject({ code: 'allocation_exceeds_outstanding' });
      }
      const books = await booksOf(company);
      const committed = answers
        .filter((answer) => answer.status === 201)
        .map((answer) => answer.body.id as string);
      expect(books.settlements.map((settlement) => settlement.id).sort()).toEqual([...committed].sort());
      expect([...books.settlementEntries].sort()).toEqual([...committed].sort());
      expect(books.paidTotals[invoice.id]).toBe(3 * share);
      expect(books.paidTotals[invoice.id]).toBeLessThanOrEqual(DEFAULT_GROSS);
      expect((await invoiceOf(t, company, invoice.id)).paidTotal).toBe(3 * share);
      expect(books.unbalancedEntries).toBe(0);
      expect(books.records.map((record) => record.response_status).sort()).toEqual(statuses);
      expect(await trialBalanceTotals(t, company)).toEqual([
        {
          currency: 'EUR',
          debitTotal: String(DEFAULT_GROSS + 3 * share),
          creditTotal: String(DEFAULT_GROSS + 3 * share),
          balanced: true,
        },
      ]);
    });

    it.each([
      ['the full gross of one shared invoice (the loser finds nothing outstanding)', true],
      ['each its own invoice (the losers meet at the unique payout index)', false],
    ])(
      '10 parallel requests for one payoutId under different keys, allocating %s → one settlement, nine 409',
      async (_name, shared) => {
        const company = await t.newCompany();
        const invoices = await Promise.all(
          Array.from({ length: shared ? 1 : 10 }, () => issueInvoice(t, company)),
        );
        const payoutId = `po_${randomUUID()}`;
        const requests = Array.from({ length: 10 }, (_, index) => ({
          key: newKey(),
          body: aSettlement()
            .forPayout(payoutId)
            .allocating(invoices[shared ? 0 : index].id, DEFAULT_GROSS)
            .build(),
        }));

        const answers = await Promise.all(requests.map(({ key, body }) => create(company, key, body)));

        const winners = answers.filter((answer) => answer.status === 201);
        expect(winners).toHaveLength(1);
        const winnerId = winners[0].body.id as string;
        const losers = answers.filter((answer) => answer.status !== 201);
        expect(losers.map((answer) => JSON.parse(answer.text) as Record<string, unknown>)).toEqual(
          Array.from({ length: 9 }, () =>
            expect.objectContaining({
              status: 409,
              code: 'payout_already_settled',
              existingSettlementId: winnerId,
            }),
          ),
        );
        const books = await booksOf(company);
        expect(books.settlements.map((settlement) => settlement.id)).toEqual([winnerId]);
        expect(books.settlementEntries).toEqual([winnerId]);
        expect(Object.values(books.paidTotals).reduce((sum, paid) => sum + paid, 0)).toBe(DEFAULT_GROSS);
        expect(books.unbalancedEntries).toBe(0);
      },
    );
  });
});

/**
 * Its own application, started after the suite above has closed its one: two live apps in
 * one Jest worker would share (and, on close, break) each other's transactions.
 */
describe('settlements after the idempotency key expired (IDEMPOTENCY_KEY_TTL=1)', () => {
  let shortLived: TestApp;

  beforeAll(async () => {
    shortLived = await startTestApp({ IDEMPOTENCY_KEY_TTL: '1' });
  });

  afterAll(async () => {
    await shortLived?.close();
  });

  it('a retry after expiry does not settle twice: 409 payout_already_settled naming the first settlement', async () => {
    const company = await shortLived.newCompany();
    const invoice = await issueInvoice(shortLived, company);
    const key = newKey();
    const body = aSettlement().withFee(150).allocating(invoice.id, 6000).build();
    const first = await post(shortLived, company, key, body);
    expect(first.status).toBe(201);

    await sleep(2200);
    const retry = await post(shortLived, company, key, body);

    const problem = problemOf(retry, 409, 'payout_already_settled');
    expect(problem.existingSettlementId).toBe(first.body.id);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    const books = await booksOf(company);
    expect(books.settlements.map((settlement) => settlement.id)).toEqual([first.body.id]);
    expect(books.settlementEntries).toEqual([first.body.id]);
    expect(books.paidTotals[invoice.id]).toBe(6000);
    expect(books.records).toEqual([
      { idempotency_key: key, response_status: 409, response_body: retry.text },
    ]);
    expect((await invoiceOf(shortLived, company, invoice.id)).paidTotal).toBe(6000);
  });
});
