import { randomUUID } from 'node:crypto';
import { createDataSource, isTransientDatabaseFailure } from '@ledgerkey/database';
import type { DataSource } from 'typeorm';
import { testDatabasePool, testDatabaseUrl } from '../../../test/support/test-database';

const TABLE = `prepared_${randomUUID().slice(0, 8)}`;
const db = testDatabasePool();
const open: DataSource[] = [];

/** A DataSource on one connection, so every statement meets the same session's prepared ones. */
async function oneConnection(preparedStatements?: number): Promise<DataSource> {
  const dataSource = await createDataSource({
    url: testDatabaseUrl(),
    poolSize: 1,
    applicationName: 'ledgerkey-prepared-test',
    preparedStatements,
    migrations: [],
  }).initialize();
  open.push(dataSource);
  return dataSource;
}

/** The statements the DataSource's one connection holds prepared (asked without parameters). */
async function preparedOn(dataSource: DataSource): Promise<string[]> {
  const rows = await dataSource.query<Array<{ statement: string }>>(
    'SELECT statement FROM pg_prepared_statements ORDER BY prepare_time',
  );
  return rows.map(({ statement }) => statement);
}

beforeAll(async () => {
  await db.query(`CREATE TABLE ${TABLE} (id int PRIMARY KEY, label text NOT NULL)`);
  await db.query(`INSERT INTO ${TABLE} VALUES (1, 'one'), (2, 'two')`);
});

afterAll(async () => {
  await Promise.all(open.map((dataSource) => dataSource.destroy()));
  await db.query(`DROP TABLE IF EXISTS ${TABLE}`);
  await db.end();
});

describe('prepared statements', () => {
  it('prepares a parameterized statement once per connection and reuses it', async () => {
    const dataSource = await oneConnection();
    const text = `SELECT label FROM ${TABLE} WHERE id = $1`;
    expect(await dataSource.query(text, [1])).toEqual([{ label: 'one' }]);
    expect(await dataSource.query(text, [2])).toEqual([{ label: 'two' }]);
    expect(await preparedOn(dataSource)).toEqual([text]);
  });

  it('sends statements without parameters unnamed', async () => {
    const dataSource = await oneConnection();
    expect(await dataSource.query(`SELECT count(*)::int AS n FROM ${TABLE}`)).toEqual([{ n: 2 }]);
    expect(await preparedOn(dataSource)).toEqual([]);
  });

  it('keeps at most the configured number per connection and still runs the rest', async () => {
    const dataSource = await oneConnection(2);
    const texts = [1, 2, 3].map((n) => `SELECT label, ${n} AS variant FROM ${TABLE} WHERE id = $1`);
    for (const text of texts) expect(await dataSource.query(text, [2])).toHaveLength(1);
    expect(await preparedOn(dataSource)).toEqual(texts.slice(0, 2));
  });

  it('prepares nothing when switched off', async () => {
    const dataSource = await oneConnection(0);
    await dataSource.query(`SELECT label FROM ${TABLE} WHERE id = $1`, [1]);
    expect(await preparedOn(dataSource)).toEqual([]);
  });

  it('treats a plan that a migration changed under it as transient and prepares it afresh', async () => {
    const dataSource = await oneConnection();
    const text = `SELECT * FROM ${TABLE} WHERE id = $1`;
    expect(await dataSource.query(text, [1])).toEqual([{ id: 1, label: 'one' }]);
    // Another instance's migration adds a column: the prepared statement's result columns change.
    await db.query(`ALTER TABLE ${TABLE} ADD COLUMN extra int NOT NULL DEFAULT 7`);

    const stale = await dataSource.query(text, [1]).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(stale).toMatchObject({ driverError: { code: '0A000', routine: 'RevalidateCachedQuery' } });
    expect(isTransientDatabaseFailure(stale)).toBe(true);
    expect(await dataSource.query(text, [1])).toEqual([{ id: 1, label: 'one', extra: 7 }]);
  });
});
