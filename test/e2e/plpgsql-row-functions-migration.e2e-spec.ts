import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { openMigrationDataSource } from '../../libs/database/src';
import { MIGRATIONS } from '../../migrations';
import { PlpgsqlRowFunctions1767300000000 } from '../../migrations/1767300000000-plpgsql-row-functions';
import { createIsolatedDatabase, type IsolatedDatabase } from '../support/isolated-database';
import { INVALID_METADATA, VALID_METADATA } from '../support/metadata-cases';
import { SQL_SELLER } from '../support/sql-fixtures';

/**
 * PlpgsqlRowFunctions1767300000000 changes only the language of `is_valid_metadata` and
 * `company_seller`: both answer exactly as before on either side of the migration, the metadata
 * CHECK still refuses what it refused, and `down()` brings the `LANGUAGE sql` bodies back.
 */
describe('migration PlpgsqlRowFunctions1767300000000', () => {
  let database: IsolatedDatabase | undefined;
  let dataSource: DataSource | undefined;

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('answers as the SQL functions did, up and down', async () => {
    const upTo = MIGRATIONS.slice(0, MIGRATIONS.indexOf(PlpgsqlRowFunctions1767300000000) + 1);
    expect(upTo.at(-1)).toBe(PlpgsqlRowFunctions1767300000000);
    database = await createIsolatedDatabase('plpgsql_row_functions', { migrations: upTo });
    dataSource = await openMigrationDataSource({
      url: database.url,
      poolSize: 2,
      applicationName: 'ledgerkey-test-migration',
      migrations: upTo,
    });
    const db = dataSource;
    const [bare, profiled, unknown] = [randomUUID(), randomUUID(), randomUUID()];
    await db.query(
      `INSERT INTO companies (id, name, country_code, currency) VALUES ($1, 'UAB Bare', 'LT', 'EUR')`,
      [bare],
    );
    await db.query(
      `INSERT INTO companies (id, name, country_code, currency, legal_name, vat_id, registration_number,
                             street, city, postal_code, address_country_code, iban, email, peppol_id)
       VALUES ($1, 'Profiled', 'LT', 'EUR', 'UAB Profiled', 'LT100001234567', '300000001', 'Gedimino pr. 1',
               'Vilnius', 'LT-01103', 'LV', 'LT121000011101001000', 'billing@profiled.example', '0200:300000001')`,
      [profiled],
    );

    const languages = async () =>
      db.query<Array<{ proname: string; lanname: string; provolatile: string }>>(
        `SELECT p.proname, l.lanname, p.provolatile FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
          WHERE p.proname IN ('is_valid_metadata', 'company_seller') ORDER BY p.proname`,
      );
    const answers = async () => {
      const metadata: Array<{ metadata: unknown; ok: boolean }> = [];
      for (const m of [...VALID_METADATA, ...INVALID_METADATA]) {
        const [{ ok }] = await db.query<Array<{ ok: boolean }>>('SELECT is_valid_metadata($1::jsonb) AS ok', [
          JSON.stringify(m),
        ]);
        metadata.push({ metadata: m, ok });
      }
      const [{ nothing }] = await db.query<Array<{ nothing: boolean | null }>>(
        'SELECT is_valid_metadata(NULL) AS nothing',
      );
      const sellers = await db.query<Array<{ seller: unknown }>>(
        'SELECT company_seller(id) AS seller FROM unnest($1::uuid[]) WITH ORDINALITY AS c(id, n) ORDER BY n',
        [[bare, profiled, unknown]],
      );
      return { metadata, nothing, sellers: sellers.map((row) => row.seller) };
    };
    const expected = {
      metadata: [
        ...VALID_METADATA.map((metadata) => ({ metadata, ok: true })),
        ...INVALID_METADATA.map((metadata) => ({ metadata, ok: false })),
      ],
      nothing: null,
      sellers: [
        { ...(JSON.parse(SQL_SELLER) as object), legalName: 'UAB Bare' },
        {
          legalName: 'UAB Profiled',
          vatId: 'LT100001234567',
          registrationNumber: '300000001',
          address: { street: 'Gedimino pr. 1', city: 'Vilnius', postalCode: 'LT-01103', countryCode: 'LV' },
          iban: 'LT121000011101001000',
          email: 'billing@profiled.example',
          peppolId: '0200:300000001',
        },
        null,
      ],
    };

    expect(await languages()).toEqual([
      { proname: 'company_seller', lanname: 'plpgsql', provolatile: 's' },
      { proname: 'is_valid_metadata', lanname: 'plpgsql', provolatile: 'i' },
    ]);
    expect(await answers()).toEqual(expected);
    // The CHECK that calls it still refuses what is out of bounds.
    await expect(
      db.query(
        `INSERT INTO invoices (id, company_id, series, sequence, number, currency, issue_date, customer,
                               vat_breakdown, net_total, vat_total, gross_total, created_at, seller, metadata)
         VALUES ($1, $2, 'INV', 1, 'INV-000001', 'EUR', '2026-12-01', '{"name": "Customer"}', '[]', 0, 0, 0,
                 now(), company_seller($2), '{"a": 1}')`,
        [randomUUID(), bare],
      ),
    ).rejects.toThrow(/ck_invoices_metadata/);

    await dataSource.undoLastMigration({ transaction: 'each' });
    expect(await languages()).toEqual([
      { proname: 'company_seller', lanname: 'sql', provolatile: 's' },
      { proname: 'is_valid_metadata', lanname: 'sql', provolatile: 'i' },
    ]);
    expect(await answers()).toEqual(expected);

    expect((await dataSource.runMigrations({ transaction: 'each' })).map((m) => m.name)).toEqual([
      'PlpgsqlRowFunctions1767300000000',
    ]);
    expect((await languages()).map((f) => f.lanname)).toEqual(['plpgsql', 'plpgsql']);
  });
});
