import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { openMigrationDataSource, quoteIdentifier } from '../../libs/database/src';
import { MIGRATIONS } from '../../migrations';
import { EventPositions1765200000000 } from '../../migrations/1765200000000-event-positions';
import { testDatabaseState } from '../support/test-database';

/**
 * The migration to per-company event positions, on a database of its own: existing events are
 * numbered in the order the feed listed them, and `down()` restores that order.
 */
describe('migration EventPositions1765200000000', () => {
  const state = testDatabaseState();
  const name = `${state.name}_event_positions`;
  let url: string;
  let dataSource: DataSource | undefined;

  async function admin(sql: string): Promise<void> {
    const client = new Client({ connectionString: state.adminUrl });
    await client.connect();
    await client.query(sql);
    await client.end();
  }

  function connect(migrations: typeof MIGRATIONS): Promise<DataSource> {
    return openMigrationDataSource({
      url,
      poolSize: 3,
      applicationName: 'ledgerkey-test-migration',
      migrations,
    });
  }

  beforeAll(async () => {
    await admin(`CREATE DATABASE ${quoteIdentifier(name)}`);
    const address = new URL(state.adminUrl);
    address.pathname = `/${name}`;
    url = address.toString();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await admin(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`);
  });

  async function newCompany(db: DataSource): Promise<string> {
    const id = randomUUID();
    await db.query(
      `INSERT INTO companies (id, name, country_code, currency) VALUES ($1, 'UAB Testas', 'LT', 'EUR')`,
      [id],
    );
    return id;
  }

  it('numbers existing events per company in the old (xid, seq) order, and down() restores that order', async () => {
    const migrationIndex = MIGRATIONS.indexOf(EventPositions1765200000000);
    expect(migrationIndex).toBeGreaterThan(0);
    // The schema as it was before this migration.
    const before = await connect(MIGRATIONS.slice(0, migrationIndex));
    await before.runMigrations({ transaction: 'each' });
    const [a, b] = [await newCompany(before), await newCompany(before)];
    // Two transactions whose events interleave: the later transaction's event was inserted first.
    const early = before.createQueryRunner();
    const late = before.createQueryRunner();
    await early.startTransaction();
    await early.query('SELECT pg_current_xact_id()');
    await late.startTransaction();
    const insert = `INSERT INTO events (id, company_id, type, data, created_at)
                    VALUES ($1, $2, 'invoice.created', '{}', now())`;
    const ids = { a1: randomUUID(), a2: randomUUID(), a3: randomUUID(), b1: randomUUID() };
    await late.query(insert, [ids.a3, a]);
    await early.query(insert, [ids.a1, a]);
    await early.query(insert, [ids.b1, b]);
    await early.query(insert, [ids.a2, a]);
    await late.commitTransaction();
    await early.commitTransaction();
    await Promise.all([early.release(), late.release()]);
    const listed = 'SELECT id FROM events ORDER BY company_id, xid, seq';
    const oldOrder = await before.query<Array<{ id: string }>>(listed);
    await before.destroy();

    dataSource = await connect(MIGRATIONS.slice(0, migrationIndex + 1));
    expect((await dataSource.runMigrations({ transaction: 'each' })).map((m) => m.name)).toEqual([
      'EventPositions1765200000000',
    ]);
    const positions = await dataSource.query<Array<{ id: string; position: string }>>(
      'SELECT id, position FROM events WHERE company_id = $1 ORDER BY position',
      [a],
    );
    expect(positions).toEqual([
      { id: ids.a1, position: '1' },
      { id: ids.a2, position: '2' },
      { id: ids.a3, position: '3' },
    ]);
    expect(
      await dataSource.query('SELECT company_id, last_position FROM event_sequences ORDER BY last_position'),
    ).toEqual([
      { company_id: b, last_position: '1' },
      { company_id: a, last_position: '3' },
    ]);
    // Still immutable, and one position per company.
    await expect(
      dataSource.query('UPDATE events SET position = 9 WHERE id = $1', [ids.b1]),
    ).rejects.toThrow();
    await expect(
      dataSource.query(
        `INSERT INTO events (id, company_id, position, type, data, created_at)
         VALUES ($1, $2, 2, 'invoice.created', '{}', now())`,
        [randomUUID(), a],
      ),
    ).rejects.toMatchObject({ driverError: { constraint: 'uq_events_company_position' } });

    await dataSource.undoLastMigration({ transaction: 'each' });
    // Every event now has one xid, and seq in position order: the old listing order is back.
    expect(await dataSource.query(listed)).toEqual(oldOrder);
    expect(await dataSource.query(`SELECT to_regclass('event_sequences') AS t`)).toEqual([{ t: null }]);

    await dataSource.runMigrations({ transaction: 'each' });
    expect(
      await dataSource.query('SELECT last_position FROM event_sequences WHERE company_id = $1', [a]),
    ).toEqual([{ last_position: '3' }]);
  });
});
