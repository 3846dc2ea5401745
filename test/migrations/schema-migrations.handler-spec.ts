import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { MigrationInterface } from 'typeorm';
import { migrationName, type Migration, pendingMigrations } from '@ledgerkey/database';
import { MIGRATIONS } from '../../migrations';
import { testDatabasePool, testDatabaseUrl } from '../support/test-database';

const db = testDatabasePool();
afterAll(() => db.end());

const onTestDatabase = <Row>(text: string) => db.query(text).then((result) => result.rows as Row[]);

class NotYetApplied9999999999999 implements MigrationInterface {
  name = 'NotYetApplied9999999999999';
  up(): Promise<void> {
    return Promise.resolve();
  }
  down(): Promise<void> {
    return Promise.resolve();
  }
}

describe('pendingMigrations (readiness, and whether a start runs TypeORM at all)', () => {
  it('none on the migrated test database; one this build has and the database has not, by name', async () => {
    expect(await pendingMigrations(onTestDatabase, MIGRATIONS)).toEqual([]);
    const withNew: Migration[] = [...MIGRATIONS, NotYetApplied9999999999999];
    expect(await pendingMigrations(onTestDatabase, withNew)).toEqual(['NotYetApplied9999999999999']);
  });

  it('names each migration as TypeORM recorded it when it ran', async () => {
    expect(migrationName(NotYetApplied9999999999999)).toBe('NotYetApplied9999999999999');
    const recorded = await onTestDatabase<{ name: string }>('SELECT name FROM schema_migrations ORDER BY id');
    expect(recorded.map((row) => row.name)).toEqual(MIGRATIONS.map(migrationName));
  });

  it('all of them on a database never migrated (no schema_migrations table)', async () => {
    const schema = `never_migrated_${randomUUID().slice(0, 8)}`;
    await db.query(`CREATE SCHEMA ${schema}`);
    const client = new Client({ connectionString: testDatabaseUrl(), options: `-c search_path=${schema}` });
    await client.connect();
    try {
      const read = <Row>(text: string) => client.query(text).then((result) => result.rows as Row[]);
      expect(await pendingMigrations(read, MIGRATIONS)).toEqual(MIGRATIONS.map(migrationName));
    } finally {
      await client.end();
      await db.query(`DROP SCHEMA ${schema}`);
    }
  });
});
