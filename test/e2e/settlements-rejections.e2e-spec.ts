import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { anInvoice, newKey } from '../support/invoice.builder';
import { problemOf } from '../support/problem-details';
import { aSettlement } from '../support/settlement.builder';
import {
  DEFAULT_GROSS,
  type InvoiceBody,
  invoiceOf,
  issueInvoice,
  settlementBooks,
  settlementCalls,
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

const { booksOf, expectNoSettlementEffects } = settlementBooks(() => db);

describe('settlements', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  const { create } = settlementCalls(() => t);

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
});
