import type { Pool } from 'pg';
import { offenderReport, REFERENCE_TABLES, TENANT_TABLES, tenantKeyOffenders } from '../support/tenant-keys';
import { testDatabasePool } from '../support/test-database';

/**
 * Issue 11, "Scale beyond one process": every tenant table must be distributable by
 * `company_id` (Citus), so its primary key, every unique index or constraint and every foreign
 * key start with `company_id`. Read from the catalog of the migrated test database, so a new
 * migration that breaks the rule (or a new table keyed otherwise) fails here.
 *
 * A tenant table has a `company_id` column and lives outside the system schemas and
 * `graphile_worker` (the job queue's schema is graphile-worker's own and stays on one node; see
 * docs/scaling.md). `companies` is not a tenant table. Exempt: only the reference tables named in
 * REFERENCE_TABLES (test/support/tenant-keys.ts), each with its reason.
 */
describe('tenant tables are keyed by company_id (distributable by company)', () => {
  let db: Pool;

  beforeAll(() => {
    db = testDatabasePool();
  });
  afterAll(async () => {
    await db.end();
  });

  async function tenantTables(): Promise<string[]> {
    const { rows } = await db.query<{ name: string }>(`${TENANT_TABLES} ORDER BY 2`);
    return rows.map((row) => row.name);
  }

  it('finds tenant tables to check', async () => {
    expect(await tenantTables()).toEqual(
      expect.arrayContaining(['public.invoices', 'public.idempotency_records', 'public.journal_entries']),
    );
  });

  it('every primary key, unique index and foreign key of a tenant table starts with company_id', async () => {
    const offenders = (await tenantKeyOffenders(db)).filter((o) => !REFERENCE_TABLES.has(o.table));
    expect(offenderReport(offenders)).toBe('');
  });

  it('each exempt reference table exists, has company_id, and references no distributed table', async () => {
    const tenant = await tenantTables();
    for (const [table, reason] of REFERENCE_TABLES) {
      expect({ table, tenant: tenant.includes(table), reason: reason.length > 20 }).toEqual({
        table,
        tenant: true,
        reason: true,
      });
    }
    // Citus: a reference table's foreign keys may reach only reference tables (companies, or
    // another exempt table), never a table distributed by company_id.
    const { rows } = await db.query<{ table: string; references: string }>(
      `SELECT format('%I.%I', n.nspname, c.relname) AS "table",
              format('%I.%I', rn.nspname, r.relname) AS "references"
         FROM pg_constraint con
         JOIN pg_class c ON c.oid = con.conrelid
         JOIN pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_class r ON r.oid = con.confrelid
         JOIN pg_namespace rn ON rn.oid = r.relnamespace
        WHERE con.contype = 'f' AND format('%I.%I', n.nspname, c.relname) = ANY($1)
        ORDER BY 1, 2`,
      [[...REFERENCE_TABLES.keys()]],
    );
    const distributed = rows.filter(
      (row) => tenant.includes(row.references) && !REFERENCE_TABLES.has(row.references),
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(distributed).toEqual([]);
  });

  it('reports a new table keyed by id alone: the check reads the catalog, it lists no tables', async () => {
    const client = await db.connect();
    try {
      await client.query('BEGIN');
      await client.query(`
        CREATE TABLE tenant_keys_probe (
          id          uuid PRIMARY KEY,
          company_id  uuid NOT NULL REFERENCES companies (id),
          code        text NOT NULL UNIQUE,
          invoice_id  uuid NOT NULL,
          CONSTRAINT fk_tenant_keys_probe_invoice FOREIGN KEY (company_id, invoice_id)
            REFERENCES invoices (company_id, id),
          CONSTRAINT uq_tenant_keys_probe_company_code UNIQUE (company_id, code)
        )`);
      await client.query(`
        CREATE TABLE tenant_keys_probe_child (
          company_id  uuid NOT NULL,
          probe_id    uuid NOT NULL REFERENCES tenant_keys_probe (id),
          CONSTRAINT pk_tenant_keys_probe_child PRIMARY KEY (company_id, probe_id)
        )`);
      await client.query(`CREATE TABLE tenant_keys_probe_bare (company_id uuid NOT NULL)`);
      const offenders = (await tenantKeyOffenders(client)).filter((o) =>
        o.table.startsWith('public.tenant_keys_probe'),
      );
      expect(offenders.map(({ table, kind, name }) => ({ table, kind, name }))).toEqual([
        { table: 'public.tenant_keys_probe', kind: 'primary key', name: 'tenant_keys_probe_pkey' },
        { table: 'public.tenant_keys_probe', kind: 'unique', name: 'tenant_keys_probe_code_key' },
        {
          table: 'public.tenant_keys_probe_bare',
          kind: 'no primary key',
          name: '',
        },
        {
          table: 'public.tenant_keys_probe_child',
          kind: 'foreign key',
          name: 'tenant_keys_probe_child_probe_id_fkey',
        },
      ]);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});
