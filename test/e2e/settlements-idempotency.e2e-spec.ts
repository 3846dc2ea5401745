import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { newKey } from '../support/invoice.builder';
import { problemOf } from '../support/problem-details';
import { aSettlement } from '../support/settlement.builder';
import {
  DEFAULT_GROSS,
  invoiceOf,
  issueInvoice,
  post,
  REUSED_DETAIL,
  settlementBooks,
  settlementCalls,
  sleep,
  trialBalanceTotals,
} from '../support/settlement-calls';
import { startTestApp, type TestApp } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

let db: Pool;

beforeAll(() => {
  db = testDatabasePool();
});

afterAll(async () => {
  await db?.end();
});

const { booksOf } = settlementBooks(() => db);

describe('settlements', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  const { create } = settlementCalls(() => t);

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
