import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { Pool } from 'pg';
import {
  type Answer,
  concurrencyCalls,
  CREATE,
  inParallel,
  shuffled,
  waitFor,
} from '../support/concurrent-invoices';
import { anInvoice, newKey } from '../support/invoice.builder';
import { RetryingClient } from '../support/retrying-client';
import { startTestApp, type TestApp } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

/** Invoices carrying this note fail inside the transaction, after their number was taken. */
const FAIL_MARKER = 'FAIL-IN-TX-CONCURRENCY';
/** Invoices carrying this note spend SLOW_SECONDS inside their transaction, holding their key. */
const SLOW_MARKER = 'SLOW-IN-TX-CONCURRENCY';
const SLOW_SECONDS = 1.5;
const TEST_TIMEOUT_MS = 60_000;
const HOOK_TIMEOUT_MS = 30_000;

describe('concurrent invoice creation', () => {
  let t: TestApp;
  let db: Pool;

  beforeAll(async () => {
    t = await startTestApp();
    db = testDatabasePool();
    await db.query(`
      CREATE OR REPLACE FUNCTION test_marked_invoice() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.notes = '${FAIL_MARKER}' THEN
          RAISE EXCEPTION 'test trigger: refusing invoice marked ${FAIL_MARKER}';
        END IF;
        PERFORM pg_sleep(${SLOW_SECONDS});
        RETURN NEW;
      END $$`);
    await db.query(`DROP TRIGGER IF EXISTS trg_test_marked_invoice ON invoices`);
    await db.query(`
      CREATE TRIGGER trg_test_marked_invoice BEFORE INSERT ON invoices
      FOR EACH ROW WHEN (NEW.notes IN ('${FAIL_MARKER}', '${SLOW_MARKER}')) EXECUTE FUNCTION test_marked_invoice()`);
  }, HOOK_TIMEOUT_MS);

  afterAll(async () => {
    await db?.query(`DROP TRIGGER IF EXISTS trg_test_marked_invoice ON invoices`);
    await db?.query(`DROP FUNCTION IF EXISTS test_marked_invoice()`);
    await db?.end();
    await t?.close();
  }, HOOK_TIMEOUT_MS);

  const { post, expectConsistentBooks, idempotencyRecords } = concurrencyCalls(() => ({ t, db }));

  it(
    'runs 50 simultaneous requests with one key exactly once; the others replay it or get 409 in use',
    async () => {
      const company = await t.newCompany();
      const key = newKey('same-key');
      // Slow, so that requests overlap the running first one (a finished key answers at once).
      const body = anInvoice()
        .withOrderId()
        .withLine({ quantity: '3', unitPrice: 1999 })
        .with({ notes: SLOW_MARKER })
        .build();

      const answers = await Promise.all(Array.from({ length: 50 }, () => post(company, key, body)));

      expect(answers.filter((answer) => answer.status >= 500)).toEqual([]);
      expect(answers.filter((answer) => answer.status !== 201 && answer.status !== 409)).toEqual([]);
      const created = answers.filter((answer) => answer.status === 201);
      const inUse = answers.filter((answer) => answer.status === 409);
      const originals = created.filter((answer) => answer.headers.get('idempotent-replayed') === null);
      expect(originals).toHaveLength(1);
      const [original] = originals;
      for (const replay of created.filter((answer) => answer !== original)) {
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
        expect(replay.text).toBe(original.text);
        expect(replay.headers.get('location')).toBe(original.headers.get('location'));
      }
      // At least one request overlapped the running first one: the requests really ran in parallel.
      expect(inUse.length).toBeGreaterThan(0);
      for (const conflict of inUse) {
        expect(conflict.body.code).toBe('idempotency_key_in_use');
        expect(conflict.headers.get('retry-after')).toMatch(/^\d+$/);
      }

      const books = await expectConsistentBooks(company, 1);
      expect(books.invoices[0].id).toBe(original.body.id);
      expect(books.invoices[0].orderId).toBe(body.orderId);
      const records = await idempotencyRecords(company.companyId);
      expect([...records.keys()]).toEqual([key]);
      expect(records.get(key)).toEqual({ status: 201, body: original.text });

      const retry = await new RetryingClient({ baseUrl: () => t.baseUrl, headers: company.auth }).post(
        CREATE,
        body,
        key,
      );
      expect(retry.status).toBe(201);
      expect(retry.replayed).toBe(true);
      expect(retry.text).toBe(original.text);
      await expectConsistentBooks(company, 1);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'answers all 20 simultaneous retries of a finished key with the replay, byte-identical: none gets 409',
    async () => {
      const company = await t.newCompany();
      const key = newKey('finished-key');
      const body = anInvoice().withOrderId().withLine().build();
      const original = await post(company, key, body);
      expect(original.status).toBe(201);

      const retries = await Promise.all(Array.from({ length: 20 }, () => post(company, key, body)));

      expect(retries.map((retry) => retry.status)).toEqual(Array(20).fill(201));
      for (const retry of retries) {
        expect(retry.headers.get('idempotent-replayed')).toBe('true');
        expect(retry.text).toBe(original.text);
        expect(retry.headers.get('location')).toBe(original.headers.get('location'));
        expect(retry.headers.get('idempotency-key-expires')).toBe(
          original.headers.get('idempotency-key-expires'),
        );
      }
      await expectConsistentBooks(company, 1);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'answers 409 in use at once while the first request with the key is still running, never queueing a second run',
    async () => {
      const company = await t.newCompany();
      const key = newKey('slow-key');
      const body = anInvoice().withOrderId().withLine().with({ notes: SLOW_MARKER }).build();
      let firstAnsweredAt = Number.POSITIVE_INFINITY;
      const first = post(company, key, body).then((answer) => {
        firstAnsweredAt = Date.now();
        return answer;
      });
      await waitFor(async () => {
        const { rows } = await db.query<{ sleeping: number }>(
          `SELECT count(*)::int AS sleeping FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event = 'PgSleep' AND query LIKE '%INSERT INTO invoices%'`,
        );
        return rows[0].sleeping > 0;
      });

      const duplicates = await Promise.all(
        Array.from({ length: 10 }, () =>
          post(company, key, body).then((answer) => ({ answer, at: Date.now() })),
        ),
      );

      for (const { answer, at } of duplicates) {
        expect(answer.status).toBe(409);
        expect(answer.body.code).toBe('idempotency_key_in_use');
        expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(at).toBeLessThan(firstAnsweredAt);
      }
      const original = await first;
      expect(original.status).toBe(201);
      expect(original.headers.get('idempotent-replayed')).toBeNull();
      const books = await expectConsistentBooks(company, 1);
      expect(books.invoices[0].id).toBe(original.body.id);
      const replay = await post(company, key, body);
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.text).toBe(original.text);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'keeps numbering gapless across 200 concurrent creates interleaved with requests that fail inside the transaction',
    async () => {
      const company = await t.newCompany();
      type InvoiceRequest = { kind: string; key: string; orderId: string; body: Record<string, unknown> };
      const orderIds = Array.from({ length: 200 }, (_, index) => `order-${index + 1}-${randomUUID()}`);
      const creates = orderIds.map((orderId, index) => ({
        kind: 'create' as const,
        key: newKey('create'),
        orderId,
        body: anInvoice()
          .withOrderId(orderId)
          .withLine({ unitPrice: 1000 + index })
          .build(),
      }));
      const duplicateOrders = orderIds
        .filter((_, index) => index % 5 === 0)
        .map((orderId) => ({
          kind: 'duplicate-order' as const,
          key: newKey('duplicate-order'),
          orderId,
          body: anInvoice().withOrderId(orderId).withLine({ unitPrice: 777 }).build(),
        }));
      const failures = Array.from({ length: 40 }, (_, index) => {
        const orderId = `failing-order-${index + 1}-${randomUUID()}`;
        return {
          kind: 'failure' as const,
          key: newKey('failure'),
          orderId,
          body: anInvoice().withOrderId(orderId).withLine().with({ notes: FAIL_MARKER }).build(),
        };
      });
      expect(duplicateOrders).toHaveLength(40);
      // A duplicate is sent at the same moment as the create it races; everything else interleaves.
      const units = shuffled([
        ...creates.map((create) => {
          const duplicate = duplicateOrders.find((candidate) => candidate.orderId === create.orderId);
          return duplicate ? shuffled<InvoiceRequest>([create, duplicate]) : [create];
        }),
        ...failures.map((failure) => [failure]),
      ]);

      const errorLog = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      let answered: Array<Array<InvoiceRequest & { answer: Answer }>>;
      try {
        // Many more requests in flight than the app's 10 pooled connections, but few enough
        // that none waits for a connection longer than the pool's 10 s acquisition timeout.
        answered = await inParallel(units, 50, (unit) =>
          Promise.all(
            unit.map(async (request) => ({
              ...request,
              answer: await post(company, request.key, request.body),
            })),
          ),
        );
      } finally {
        errorLog.mockRestore();
      }
      const outcomes = answered.flat();
      expect(outcomes).toHaveLength(280);

      const tally = new Map<string, number>();
      for (const { answer } of outcomes) {
        const outcome = `${answer.status} ${answer.status === 201 ? 'created' : String(answer.body.code)}`;
        tally.set(outcome, (tally.get(outcome) ?? 0) + 1);
      }
      expect(Object.fromEntries(tally)).toEqual({
        '201 created': 200,
        '409 order_already_invoiced': 40,
        '500 internal_error': 40,
      });

      for (const { answer } of outcomes.filter((outcome) => outcome.kind === 'failure')) {
        expect(answer.status).toBe(500);
        expect(Object.keys(answer.body).sort()).toEqual([
          'code',
          'detail',
          'requestId',
          'status',
          'title',
          'type',
        ]);
        expect(answer.text).not.toMatch(/FAIL-IN-TX|trigger|INSERT|invoices|QueryFailed|\.ts:\d+/i);
      }

      const answersByOrder = new Map<string, Answer[]>();
      for (const { orderId, answer, kind } of outcomes) {
        if (kind !== 'failure') answersByOrder.set(orderId, [...(answersByOrder.get(orderId) ?? []), answer]);
      }
      const books = await expectConsistentBooks(company, 200);
      const invoiceByOrder = new Map(books.invoices.map((invoice) => [invoice.orderId, invoice]));
      expect(invoiceByOrder.size).toBe(200);
      for (const orderId of orderIds) {
        const invoice = invoiceByOrder.get(orderId);
        const winners = answersByOrder.get(orderId)!.filter((answer) => answer.status === 201);
        const losers = answersByOrder.get(orderId)!.filter((answer) => answer.status !== 201);
        expect(winners).toHaveLength(1);
        expect(winners[0].body).toMatchObject({
          id: invoice?.id,
          orderId,
          sequence: invoice?.sequence,
          number: invoice?.number,
        });
        for (const loser of losers) {
          expect(loser.body).toMatchObject({
            status: 409,
            code: 'order_already_invoiced',
            existingInvoiceId: invoice?.id,
          });
        }
      }
      expect(failures.filter((failure) => invoiceByOrder.has(failure.orderId))).toEqual([]);

      const records = await idempotencyRecords(company.companyId);
      expect(records.size).toBe(240);
      for (const { key, kind, answer } of outcomes) {
        if (kind === 'failure') {
          expect(records.has(key)).toBe(false);
        } else {
          expect(records.get(key)).toEqual({ status: answer.status, body: answer.text });
        }
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'gives each order one invoice when two keys race for it; the loser names the winner',
    async () => {
      const company = await t.newCompany();
      const pairs = Array.from({ length: 20 }, (_, index) => {
        const orderId = `raced-order-${index + 1}-${randomUUID()}`;
        return {
          orderId,
          requests: [
            {
              key: newKey('race-a'),
              body: anInvoice().withOrderId(orderId).withLine({ unitPrice: 100 }).build(),
            },
            {
              key: newKey('race-b'),
              body: anInvoice().withOrderId(orderId).withLine({ unitPrice: 200 }).build(),
            },
          ],
        };
      });

      const answers = await Promise.all(
        pairs.map((pair) =>
          Promise.all(pair.requests.map((request) => post(company, request.key, request.body))),
        ),
      );

      const books = await expectConsistentBooks(company, 20);
      pairs.forEach((pair, index) => {
        const stored = books.invoices.filter((invoice) => invoice.orderId === pair.orderId);
        expect(stored).toHaveLength(1);
        const winners = answers[index].filter((answer) => answer.status === 201);
        const losers = answers[index].filter((answer) => answer.status !== 201);
        expect(winners).toHaveLength(1);
        expect(winners[0].body.id).toBe(stored[0].id);
        expect(losers).toHaveLength(1);
        expect(losers[0].status).toBe(409);
        expect(losers[0].body).toMatchObject({
          code: 'order_already_invoiced',
          existingInvoiceId: stored[0].id,
        });
      });
    },
    TEST_TIMEOUT_MS,
  );
});
