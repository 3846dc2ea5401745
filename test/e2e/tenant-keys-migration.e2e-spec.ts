import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient, QueryResult } from 'pg';
import type { DataSource } from 'typeorm';
import { openMigrationDataSource, runMigrations } from '../../libs/database/src';
import { MIGRATIONS } from '../../migrations';
import { TenantKeys1765500000000 } from '../../migrations/1765500000000-tenant-keys';
import {
  createIsolatedDatabase,
  type IsolatedDatabase,
  isolatedDatabasePool,
} from '../support/isolated-database';
import { offenderReport, REFERENCE_TABLES, tenantKeyOffenders } from '../support/tenant-keys';

const MIGRATION = TenantKeys1765500000000;

/** Every table the migration re-keys, and the ones it leaves alone: their rows must not change. */
const TABLES = [
  'companies',
  'api_keys',
  'idempotency_records',
  'document_sequences',
  'invoices',
  'invoice_lines',
  'credit_notes',
  'credit_note_lines',
  'purchase_invoices',
  'purchase_invoice_lines',
  'settlements',
  'settlement_allocations',
  'journal_entries',
  'journal_lines',
  'event_sequences',
  'events',
  'webhook_endpoints',
  'webhook_deliveries',
  'webhook_attempts',
];

const SECRET = `whsec_${'A'.repeat(43)}=`;

/** Rows of one company in every tenant table, written as the code before the migration wrote them. */
function companySql(company: string, tag: string): string {
  const id = () => `'${randomUUID()}'`;
  const [invoice1, invoice2, creditNote, purchase, settlement, entry, event1, event2] = Array.from(
    { length: 8 },
    id,
  );
  const [endpoint, delivery] = [id(), id()];
  const c = `'${company}'`;
  const line = (document: string, position: number) =>
    `(${document}, ${c}, ${position}, 'Line ${position}', 2, 500, 21, 1000)`;
  const invoice = (invoiceId: string, sequence: number) => `
    INSERT INTO invoices (id, company_id, series, sequence, number, currency, issue_date, customer,
                          vat_breakdown, net_total, vat_total, gross_total, created_at)
    VALUES (${invoiceId}, ${c}, 'INV', ${sequence}, 'INV-${sequence}', 'EUR', '2026-12-01',
            '{"name": "Customer ${tag}"}', '[]', 2000, 420, 2420, now());
    INSERT INTO invoice_lines (invoice_id, company_id, position, description, quantity, unit_price,
                               vat_rate, net_amount)
    VALUES ${line(invoiceId, 1)}, ${line(invoiceId, 2)};`;
  return `
    INSERT INTO companies (id, name, country_code, currency) VALUES (${c}, 'Company ${tag}', 'LT', 'EUR');
    INSERT INTO api_keys (id, company_id, key_hash, key_prefix)
    VALUES (${id()}, ${c}, sha256('key ${company}'::bytea), 'lk_${tag}');
    INSERT INTO idempotency_records (company_id, operation, idempotency_key, fingerprint, response_status,
                                     response_headers, response_body, expires_at)
    VALUES (${c}, 'invoices.create', 'key-${tag}', sha256('${tag}'::bytea), 201, '{}', '{}',
            now() + interval '1 day');
    INSERT INTO document_sequences (company_id, document_type, series, last_value)
    VALUES (${c}, 'invoice', 'INV', 2), (${c}, 'credit_note', 'CN', 1);
    ${invoice(invoice1, 1)}
    ${invoice(invoice2, 2)}
    INSERT INTO credit_notes (id, company_id, invoice_id, series, sequence, number, reason, currency,
                              vat_breakdown, net_total, vat_total, gross_total, created_at)
    VALUES (${creditNote}, ${c}, ${invoice1}, 'CN', 1, 'CN-1', 'other', 'EUR', '[]', 1000, 210, 1210, now());
    INSERT INTO credit_note_lines (credit_note_id, company_id, position, description, quantity, unit_price,
                                   vat_rate, net_amount)
    VALUES ${line(creditNote, 1)};
    INSERT INTO purchase_invoices (id, company_id, supplier, supplier_key, supplier_vat_id, supplier_name_key,
                                   document_number, document_key, currency, issue_date, vat_breakdown,
                                   net_total, vat_total, gross_total, created_at)
    VALUES (${purchase}, ${c}, '{"name": "Supplier"}', 'vat:LT${tag}', 'LT${tag}', 'supplier', 'S-1', 'S-1',
            'EUR', '2026-12-01', '[]', 2000, 420, 2420, now());
    INSERT INTO purchase_invoice_lines (purchase_invoice_id, company_id, position, description, quantity,
                                        unit_price, vat_rate, net_amount)
    VALUES ${line(purchase, 1)}, ${line(purchase, 2)};
    INSERT INTO settlements (id, company_id, payout_id, currency, paid_at, fee_amount, allocated_total, created_at)
    VALUES (${settlement}, ${c}, 'po_${tag}', 'EUR', now(), 10, 3000, now());
    INSERT INTO settlement_allocations (settlement_id, company_id, invoice_id, amount)
    VALUES (${settlement}, ${c}, ${invoice1}, 1000), (${settlement}, ${c}, ${invoice2}, 2000);
    INSERT INTO journal_entries (id, company_id, currency, source_type, source_id, memo, posted_at, line_count)
    VALUES (${entry}, ${c}, 'EUR', 'invoice', ${invoice1}, 'Invoice INV-1', now(), 3);
    INSERT INTO journal_lines (entry_id, company_id, line_no, account, debit, credit)
    VALUES (${entry}, ${c}, 1, 'accounts_receivable', 2420, 0), (${entry}, ${c}, 2, 'revenue', 0, 2000),
           (${entry}, ${c}, 3, 'vat_payable', 0, 420);
    INSERT INTO event_sequences (company_id, last_position) VALUES (${c}, 2);
    INSERT INTO events (id, company_id, position, type, data, created_at)
    VALUES (${event1}, ${c}, 1, 'invoice.created', '{}', now()), (${event2}, ${c}, 2, 'invoice.created', '{}', now());
    INSERT INTO webhook_endpoints (id, company_id, url, enabled_events, secret)
    VALUES (${endpoint}, ${c}, 'https://example.com/${tag}', '{*}', '${SECRET}');
    INSERT INTO webhook_deliveries (id, company_id, event_id, endpoint_id) VALUES (${delivery}, ${c}, ${event1}, ${endpoint});
    INSERT INTO webhook_attempts (id, company_id, delivery_id, endpoint_id, event_id, attempt_number, result,
                                  status_code, started_at, finished_at)
    VALUES (${id()}, ${c}, ${delivery}, ${endpoint}, ${event1}, 1, 'failed', 500, now(), now());`;
}

/**
 * The migration on a database written by the code before it (two companies with rows in every
 * tenant table): the keys change, the rows do not, and down() gives back exactly the old schema.
 */
describe('migration TenantKeys1765500000000 on existing data', () => {
  const position = MIGRATIONS.indexOf(MIGRATION);
  let database: IsolatedDatabase;
  let db: Pool;
  let dataSource: DataSource;
  const [a, b] = [randomUUID(), randomUUID()];
  let schemaBefore: unknown[];
  let rowsBefore: Record<string, string>;
  let offendersBefore: string;

  /** Constraints, indexes and our functions' source: what up() and down() may change. */
  async function schema(): Promise<unknown[]> {
    const { rows } = await db.query(
      `SELECT conrelid::regclass::text AS "table", conname AS name, pg_get_constraintdef(oid) AS definition
         FROM pg_constraint WHERE connamespace = 'public'::regnamespace
       UNION ALL
       SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'
       UNION ALL
       SELECT 'function', proname, prosrc FROM pg_proc WHERE pronamespace = 'public'::regnamespace
       ORDER BY 1, 2, 3`,
    );
    return rows;
  }

  /** Per table: row count and a digest of every row. */
  async function rowDigests(): Promise<Record<string, string>> {
    const digests: Record<string, string> = {};
    for (const table of TABLES) {
      const { rows } = await db.query<{ digest: string }>(
        `SELECT count(*) || ':' || coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '') AS digest
           FROM ${table} t`,
      );
      digests[table] = rows[0].digest;
    }
    return digests;
  }

  async function offenders(): Promise<string> {
    return offenderReport((await tenantKeyOffenders(db)).filter((o) => !REFERENCE_TABLES.has(o.table)));
  }

  /** A line of company B naming an invoice of company A. */
  function crossCompanyLine(on: Pool | PoolClient = db): Promise<QueryResult> {
    return on.query(
      `INSERT INTO invoice_lines (invoice_id, company_id, position, description, quantity, unit_price,
                                  vat_rate, net_amount)
       SELECT id, $2, 99, 'Foreign line', 1, 1, 0, 1 FROM invoices WHERE company_id = $1 LIMIT 1`,
      [a, b],
    );
  }

  beforeAll(async () => {
    expect(position).toBeGreaterThan(0);
    database = await createIsolatedDatabase('tenant_keys_migration', {
      migrations: MIGRATIONS.slice(0, position),
      jobQueue: false,
    });
    db = isolatedDatabasePool(database, 2);
    // One simple-protocol call per company: one transaction, so the deferred balance check sees
    // each journal entry with all its lines.
    await db.query(companySql(a, 'A'));
    await db.query(companySql(b, 'B'));

    schemaBefore = await schema();
    rowsBefore = await rowDigests();
    offendersBefore = await offenders();

    dataSource = await openMigrationDataSource({
      url: database.url,
      poolSize: 2,
      applicationName: 'ledgerkey-migration-test',
      migrations: MIGRATIONS.slice(0, position + 1),
    });
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.end();
    await database?.drop();
  });

  it('before: rows in every table; the old keys let a line name an invoice of another company', async () => {
    const { rows: tables } = await db.query<{ name: string }>(
      `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations'
        ORDER BY 1`,
    );
    expect(tables.map((table) => table.name)).toEqual([...TABLES].sort());
    for (const table of TABLES)
      expect({ table, empty: rowsBefore[table].startsWith('0:') }).toEqual({ table, empty: false });
    // The 28 offenders of docs/scaling.md but the two of api_keys, a reference table.
    expect(offendersBefore.split('\n')).toHaveLength(26);
    expect(offendersBefore).toContain('public.invoice_lines: primary key pk_invoice_lines');
    expect(offendersBefore).toContain('public.webhook_attempts: unique uq_webhook_attempts_seq');
    const client = await db.connect();
    try {
      await client.query('BEGIN');
      await expect(crossCompanyLine(client)).resolves.toMatchObject({ rowCount: 1 });
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('up: every tenant key starts with company_id, and every row is unchanged', async () => {
    expect(await runMigrations(dataSource)).toEqual([MIGRATION.name]);
    expect(await offenders()).toBe('');
    expect(await rowDigests()).toEqual(rowsBefore);
  });

  it('after up: foreign keys join within one company', async () => {
    await expect(crossCompanyLine()).rejects.toMatchObject({
      code: '23503',
      constraint: 'fk_invoice_lines_invoice',
    });
    await expect(
      db.query(
        `INSERT INTO webhook_deliveries (id, company_id, event_id, endpoint_id)
         SELECT gen_random_uuid(), $2, e.id, w.id
           FROM events e JOIN webhook_endpoints w ON w.company_id = $2
          WHERE e.company_id = $1 LIMIT 1`,
        [a, b],
      ),
    ).rejects.toMatchObject({ code: '23503', constraint: 'fk_webhook_deliveries_event' });
  });

  it('after up: the statements of the code find their conflict targets and keys', async () => {
    // The fan-out's re-run inserts nothing (ON CONFLICT on the per-company unique).
    const { rowCount } = await db.query(
      `INSERT INTO webhook_deliveries (id, company_id, event_id, endpoint_id)
       SELECT gen_random_uuid(), d.company_id, d.event_id, d.endpoint_id FROM webhook_deliveries d
       ON CONFLICT (company_id, event_id, endpoint_id) DO NOTHING`,
    );
    expect(rowCount).toBe(0);
    const attempts = await db.query(
      `INSERT INTO webhook_attempts (id, company_id, delivery_id, endpoint_id, event_id, attempt_number, result,
                                     started_at, finished_at)
       SELECT gen_random_uuid(), company_id, delivery_id, endpoint_id, event_id, attempt_number, 'abandoned',
              now(), now() FROM webhook_attempts
       ON CONFLICT (company_id, delivery_id, attempt_number) DO NOTHING`,
    );
    expect(attempts.rowCount).toBe(0);
    // The keyset column stays unique within a company.
    await expect(
      db.query(
        `INSERT INTO journal_entries (id, company_id, seq, currency, source_type, source_id, memo, posted_at,
                                      line_count)
         OVERRIDING SYSTEM VALUE
         SELECT gen_random_uuid(), company_id, seq, 'EUR', 'manual', gen_random_uuid(), 'test', now(), 2
           FROM journal_entries WHERE company_id = $1`,
        [a],
      ),
    ).rejects.toMatchObject({ code: '23505', constraint: 'uq_journal_entries_company_seq' });
  });

  it('after up: the balance check reads entry and lines by company, and still refuses an unbalanced entry', async () => {
    const client = await db.connect();
    // SET CONSTRAINTS … IMMEDIATE runs the deferred check now; the transaction is rolled back.
    const post = async (credit: number): Promise<void> => {
      const entry = randomUUID();
      await client.query('BEGIN');
      try {
        await client.query(
          `INSERT INTO journal_entries (id, company_id, currency, source_type, source_id, memo, posted_at,
                                        line_count)
           VALUES ($1, $2, 'EUR', 'manual', gen_random_uuid(), 'test', now(), 2)`,
          [entry, a],
        );
        await client.query(
          `INSERT INTO journal_lines (entry_id, company_id, line_no, account, debit, credit)
           VALUES ($1, $2, 1, 'cash', 100, 0), ($1, $2, 2, 'revenue', 0, $3)`,
          [entry, a, credit],
        );
        await client.query('SET CONSTRAINTS ALL IMMEDIATE');
      } finally {
        await client.query('ROLLBACK');
      }
    };
    try {
      await expect(post(100)).resolves.toBeUndefined();
      await expect(post(99)).rejects.toMatchObject({ code: '23514' });
    } finally {
      client.release();
    }
    const { rows } = await db.query<{ source: string }>(
      `SELECT prosrc AS source FROM pg_proc WHERE proname = 'assert_journal_entry_balanced'`,
    );
    expect(rows[0].source).toContain('WHERE company_id = NEW.company_id AND entry_id = target');
  });

  it('down: exactly the old constraints, indexes and functions, with every row unchanged', async () => {
    await dataSource.undoLastMigration({ transaction: 'each' });
    expect(await schema()).toEqual(schemaBefore);
    expect(await rowDigests()).toEqual(rowsBefore);
    expect(await offenders()).toBe(offendersBefore);
  });

  it('up again after down: the same keys', async () => {
    expect(await runMigrations(dataSource)).toEqual([MIGRATION.name]);
    expect(await offenders()).toBe('');
    expect(await rowDigests()).toEqual(rowsBefore);
  });

  it('refuses to run over rows that join two companies, naming the foreign key, and changes nothing', async () => {
    await dataSource.undoLastMigration({ transaction: 'each' });
    await crossCompanyLine();
    await expect(runMigrations(dataSource)).rejects.toThrow(/fk_invoice_lines_invoice/);
    expect(await schema()).toEqual(schemaBefore);
  });
});
