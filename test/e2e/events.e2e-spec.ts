import { jobKeyOf, JobTasks } from '@ledgerkey/jobs';
import { Client, type Pool, type PoolClient } from 'pg';
import type { Response } from 'supertest';
import { anInvoice, newKey } from '../support/invoice.builder';
import { aPurchaseInvoice } from '../support/purchase-invoice.builder';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool, testDatabaseUrl } from '../support/test-database';

interface ListedEvent {
  id: string;
  type: string;
  data: { object: { id: string } };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('events (outbox)', () => {
  let t: TestApp;
  let db: Pool;

  beforeAll(async () => {
    t = await startTestApp();
    db = testDatabasePool();
  });
  afterAll(async () => {
    await db.end();
    await t.close();
  });

  it('writes one event per created document, with the document as its GET shows it; replays emit none', async () => {
    const company = await t.newCompany();
    const key = newKey();
    const body = anInvoice().withLine({ quantity: '1', unitPrice: 10000 }).build();
    const invoice = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', key)
      .send(body);
    const replay = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', key)
      .send(body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const credit = await t.http
      .post('/v1/sales/credit-notes/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send({ invoiceId: invoice.body.id, reason: 'duplicate' });
    expect(credit.status).toBe(201);
    const purchase = await t.http
      .post('/v1/purchases/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send({
        supplier: { name: 'Tiekėjas', countryCode: 'LT' },
        documentNumber: 'T-1',
        issueDate: '2026-11-30',
        lines: [{ description: 'Paper', quantity: '1', unitPrice: 500, vatRate: '21' }],
      });
    expect(purchase.status).toBe(201);
    const second = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send(anInvoice().withLine({ quantity: '1', unitPrice: 2000 }).build());
    const settlement = await t.http
      .post('/v1/settlements/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send({
        payoutId: `po_${key}`,
        currency: 'EUR',
        paidAt: '2026-11-30T10:00:00Z',
        allocations: [{ invoiceId: second.body.id, amount: 2420 }],
      });
    expect(settlement.status).toBe(201);

    const events = await t.http.get('/v1/events?limit=100').set(company.auth);
    expect(events.status).toBe(200);
    expect(events.body.data.map((event: { type: string }) => event.type)).toEqual([
      'invoice.created',
      'credit_note.created',
      'purchase_invoice.created',
      'invoice.created',
      'settlement.created',
    ]);
    const [first] = events.body.data;
    expect(first).toEqual({
      id: expect.any(String),
      object: 'event',
      type: 'invoice.created',
      createdAt: invoice.body.createdAt,
      data: { object: JSON.parse(invoice.text) },
    });
    const single = await t.http.get(`/v1/events/${first.id}`).set(company.auth);
    expect(single.body).toEqual(first);

    // No job per event: a company without webhook endpoints gets no delivery and nothing queued.
    const ids = events.body.data.map((event: { id: string }) => event.id);
    const { rows } = await db.query(
      `SELECT (SELECT count(*)::int FROM graphile_worker.jobs WHERE key = ANY($1)) AS jobs,
              (SELECT count(*)::int FROM webhook_deliveries WHERE company_id = $2) AS deliveries`,
      [ids.map((id: string) => jobKeyOf(JobTasks.FanOutEvent, id)), company.companyId],
    );
    expect(rows[0]).toEqual({ jobs: 0, deliveries: 0 });
  });

  it('pages in order with startingAfter and never shows another company', async () => {
    const company = await t.newCompany();
    const other = await t.newCompany();
    for (let i = 0; i < 3; i += 1) {
      const response = await t.http
        .post('/v1/sales/invoices/create')
        .set(company.auth)
        .set('Idempotency-Key', newKey())
        .send(anInvoice().withLine().build());
      expect(response.status).toBe(201);
    }
    const page1 = await t.http.get('/v1/events?limit=2').set(company.auth);
    const page2 = await t.http
      .get(`/v1/events?limit=2&startingAfter=${page1.body.data[1].id}`)
      .set(company.auth);
    expect(page1.body.hasMore).toBe(true);
    expect(page2.body.hasMore).toBe(false);
    const numbers = [...page1.body.data, ...page2.body.data].map(
      (event: { data: { object: { number: string } } }) => event.data.object.number,
    );
    expect(numbers).toEqual(['INV-000001', 'INV-000002', 'INV-000003']);
    const foreign = await t.http.get('/v1/events').set(other.auth);
    expect(foreign.body.data).toEqual([]);
    const foreignGet = await t.http.get(`/v1/events/${page1.body.data[0].id}`).set(other.auth);
    expect(foreignGet.status).toBe(404);
  });

  async function listAfter(company: TestCompany, startingAfter?: string): Promise<ListedEvent[]> {
    const query = startingAfter === undefined ? '' : `&startingAfter=${startingAfter}`;
    const response = await t.http.get(`/v1/events?limit=100${query}`).set(company.auth);
    expect(response.status).toBe(200);
    return response.body.data as ListedEvent[];
  }

  /** Polls until `condition` holds; false if it never did within `timeoutMs`. */
  async function eventually(condition: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await condition()) return true;
      if (Date.now() > deadline) return false;
      await sleep(25);
    }
  }

  /** Backends of this database that wait on a lock `blocker` holds. */
  async function waitingOn(blocker: number): Promise<number[]> {
    const { rows } = await db.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))`,
      [blocker],
    );
    return rows.map((row) => row.pid);
  }

  it("lists an event as soon as it commits, while another tenant's transaction is still running", async () => {
    const company = await t.newCompany();
    // A stranger's long transaction, e.g. a slow report of another tenant or `BEGIN … pg_sleep`:
    // it has a transaction id, so it holds back the oldest running transaction of the database.
    const stranger = new Client({ connectionString: testDatabaseUrl() });
    await stranger.connect();
    try {
      await stranger.query('BEGIN');
      const { rows } = await stranger.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid');
      const horizon = await db.query<{ held_back: boolean }>(
        `SELECT pg_snapshot_xmin(pg_current_snapshot()) <= $1::xid8 AS held_back`,
        [rows[0].xid],
      );
      expect(horizon.rows[0].held_back).toBe(true);

      const invoice = await t.http
        .post('/v1/sales/invoices/create')
        .set(company.auth)
        .set('Idempotency-Key', newKey())
        .send(anInvoice().withLine().build());
      expect(invoice.status).toBe(201);
      const committed = Date.now();
      // The stranger keeps its transaction open for 10 s; the event must not wait for it.
      const listed = await eventually(
        async () => (await listAfter(company)).some((event) => event.data.object.id === invoice.body.id),
        2_000,
      );
      const lagMs = Date.now() - committed;

      expect({ listed, lagMs: lagMs < 2_000 }).toEqual({ listed: true, lagMs: true });
      const stillOpen = await stranger.query<{ xid: string | null }>(
        'SELECT pg_current_xact_id_if_assigned()::text AS xid',
      );
      expect(stillOpen.rows[0].xid).toBe(rows[0].xid);
    } finally {
      await stranger.query('ROLLBACK').catch(() => undefined);
      await stranger.end();
    }
  }, 30_000);

  it('never skips: an event waiting for an earlier, uncommitted one is listed after it, once both commit', async () => {
    const company = await t.newCompany();
    const first = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send(anInvoice().withLine().build());
    expect(first.status).toBe(201);
    const [seen] = await listAfter(company);
    expect(seen.data.object.id).toBe(first.body.id);

    // Request A will take the next event position, then wait before its commit: its idempotency
    // record (the write after the event) conflicts with this uncommitted row of the same key.
    const keyA = newKey();
    const holder: PoolClient = await db.connect();
    let a: Promise<Response> | undefined;
    let b: Promise<Response> | undefined;
    try {
      await holder.query('BEGIN');
      await holder.query(
        `INSERT INTO idempotency_records (company_id, operation, idempotency_key, fingerprint,
                                            response_status, response_body, expires_at)
           VALUES ($1, 'sales.invoices.create', $2, decode(repeat('00', 32), 'hex'), 201, '{}',
                   now() + interval '1 hour')`,
        [company.companyId, keyA],
      );
      const {
        rows: [{ pid: holderPid }],
      } = await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');

      a = t.http
        .post('/v1/sales/invoices/create')
        .set(company.auth)
        .set('Idempotency-Key', keyA)
        .send(anInvoice().withLine().build())
        .then((response) => response);
      expect(await eventually(async () => (await waitingOn(holderPid)).length === 1, 10_000)).toBe(true);
      const [pidA] = await waitingOn(holderPid);

      // Request B (another document type: no shared number) waits for A's event position.
      b = t.http
        .post('/v1/purchases/invoices/create')
        .set(company.auth)
        .set('Idempotency-Key', newKey())
        .send(aPurchaseInvoice().withLine().build())
        .then((response) => response);
      expect(await eventually(async () => (await waitingOn(pidA)).length === 1, 10_000)).toBe(true);

      // Neither has committed: a client paging from what it has seen gets nothing yet.
      expect(await listAfter(company, seen.id)).toEqual([]);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    const [responseA, responseB] = await Promise.all([a, b]);
    expect([responseA?.status, responseB?.status]).toEqual([201, 201]);

    const next = await listAfter(company, seen.id);
    expect(next.map((event) => [event.type, event.data.object.id])).toEqual([
      ['invoice.created', responseA?.body.id],
      ['purchase_invoice.created', responseB?.body.id],
    ]);
    const positions = await db.query<{ position: string }>(
      'SELECT position FROM events WHERE company_id = $1 ORDER BY position',
      [company.companyId],
    );
    expect(positions.rows.map((row) => Number(row.position))).toEqual([1, 2, 3]);
  }, 30_000);
});
