import type { Pool } from 'pg';
import {
  type CreateResult,
  type InvoiceView,
  type IssueInvoiceDto,
  LedgerkeyClient,
} from '../../libs/sdk/src';
import { anInvoice } from '../support/invoice.builder';
import { type LossyProxy, startLossyProxy } from '../support/lossy-proxy';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

const LOGICAL_CREATES = 40;
const CONCURRENCY = 8;
const DROP_RESPONSE_RATE = 0.5;
const RESET_BEFORE_FORWARD_RATE = 0.1;
const MIN_DROPPED_SHARE = 0.3;

/** mulberry32: a seeded PRNG, so a failing run's fault sequence can be replayed with its seed. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function inBatches<T>(count: number, width: number, run: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) {
        const index = next++;
        results[index] = await run(index);
      }
    }),
  );
  return results;
}

describe('SDK through a network that loses responses', () => {
  let t: TestApp;
  let db: Pool;
  let proxy: LossyProxy;
  let company: TestCompany;
  const seed = Number(process.env.LOSSY_SEED ?? Date.now() % 1_000_000);

  beforeAll(async () => {
    t = await startTestApp();
    db = testDatabasePool();
    company = await t.newCompany();
    const { port } = new URL(t.baseUrl);
    proxy = await startLossyProxy({
      target: { host: '127.0.0.1', port: Number(port) },
      dropResponseRate: DROP_RESPONSE_RATE,
      resetBeforeForwardRate: RESET_BEFORE_FORWARD_RATE,
      maxDelayMs: 20,
      random: seededRandom(seed),
      appliesTo: (request) => request.method === 'POST',
    });
  });

  afterAll(async () => {
    await proxy?.close();
    await db?.end();
    await t?.close();
  });

  it(`${LOGICAL_CREATES} creates with ≥${MIN_DROPPED_SHARE * 100}% lost responses: each invoice exists once, with the id its caller got`, async () => {
    const client = new LedgerkeyClient({
      baseUrl: proxy.url,
      apiKey: company.apiKey,
      timeoutMs: 10_000,
      retry: { maxAttempts: 30, baseDelayMs: 5, maxDelayMs: 100, maxRetryAfterMs: 2_000 },
    });
    const persistedKeys = new Map<string, string>();

    const results: Array<CreateResult<InvoiceView> & { orderId: string }> = await inBatches(
      LOGICAL_CREATES,
      CONCURRENCY,
      async (index) => {
        const orderId = `order-${seed}-${index}`;
        const body = anInvoice()
          .withOrderId(orderId)
          .withLine({ unitPrice: 1000 + index })
          .build() as unknown as IssueInvoiceDto;
        // Half with a deterministic domain key, half with the SDK's own UUID (made once per call).
        const result = await client.salesInvoices.create(body, {
          idempotencyKey: index % 2 === 0 ? `${orderId}-invoice` : undefined,
          onKey: (key) => void persistedKeys.set(orderId, key),
        });
        return { ...result, orderId };
      },
    );

    const creates = proxy.stats.log.filter((request) => request.method === 'POST');
    const dropped = creates.filter((request) => request.fate === 'drop-response').length;
    const summary = {
      seed,
      attempts: creates.length,
      droppedResponses: dropped,
      resetsBeforeForward: creates.filter((request) => request.fate === 'reset-before-forward').length,
      replayed: results.filter((result) => result.replayed).length,
    };
    process.stdout.write(`lossy network run: ${JSON.stringify(summary)}\n`);

    // The network really was that bad: at least 30% of the logical operations lost a response.
    expect(dropped).toBeGreaterThanOrEqual(MIN_DROPPED_SHARE * LOGICAL_CREATES);
    expect(summary.replayed).toBeGreaterThan(0);

    // One key per logical call, reused on every attempt, handed to onKey before the first one.
    for (const result of results) {
      expect(persistedKeys.get(result.orderId)).toBe(result.idempotencyKey);
    }
    // A fresh key per attempt would show up here as more keys than logical operations.
    const distinctKeysSent = new Set(creates.map((request) => request.headers['idempotency-key']));
    expect(distinctKeysSent.size).toBe(LOGICAL_CREATES);

    // Zero duplicates, zero lost operations, and every caller holds the id the server stored.
    const stored = await db.query<{ id: string; order_id: string; sequence: string }>(
      'SELECT id, order_id, sequence FROM invoices WHERE company_id = $1 ORDER BY sequence',
      [company.companyId],
    );
    expect(stored.rows).toHaveLength(LOGICAL_CREATES);
    const storedIdByOrder = new Map(stored.rows.map((row) => [row.order_id, row.id]));
    for (const result of results) {
      expect({ orderId: result.orderId, id: result.data.id }).toEqual({
        orderId: result.orderId,
        id: storedIdByOrder.get(result.orderId),
      });
      expect(result.data.orderId).toBe(result.orderId);
    }
    // No number was burnt by a retry: the sequence is gapless.
    expect(stored.rows.map((row) => Number(row.sequence))).toEqual(
      Array.from({ length: LOGICAL_CREATES }, (_, index) => index + 1),
    );
    const entries = await db.query<{ count: string }>(
      'SELECT count(*) FROM journal_entries WHERE company_id = $1',
      [company.companyId],
    );
    expect(Number(entries.rows[0].count)).toBe(LOGICAL_CREATES);
    const events = await db.query<{ count: string }>('SELECT count(*) FROM events WHERE company_id = $1', [
      company.companyId,
    ]);
    expect(Number(events.rows[0].count)).toBe(LOGICAL_CREATES);

    // Reads go through the same proxy (faults apply to POSTs only) and agree with the database.
    const listed = await client.salesInvoices.list({ limit: 100 });
    expect(listed.data.map((invoice) => invoice.id).sort()).toEqual(
      results.map((result) => result.data.id).sort(),
    );
  }, 120_000);
});
