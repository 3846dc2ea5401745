import type { DataSource, MigrationInterface } from 'typeorm';
import { createDataSource } from './data-source.factory';
import type { DatabaseOptions } from './database-options';
import { isUndefinedTable } from './postgres-errors';

/** A migration class, as the schema lists them (`migrations/index.ts`). */
export type Migration = new () => MigrationInterface;

/** Runs one statement and resolves with its rows (a `DatabasePool`, or a pg client adapted). */
export type RowReader = <Row>(text: string) => Promise<Row[]>;

/** The name TypeORM records a migration under in `schema_migrations`: its `name`, else its class's. */
export function migrationName(migration: Migration): string {
  return new migration().name ?? migration.name;
}

/**
 * The names of `migrations` not recorded as applied, in their order: all of them on a database
 * that has never been migrated. One read of a small table; no TypeORM.
 */
export async function pendingMigrations(read: RowReader, migrations: Migration[]): Promise<string[]> {
  let applied: Set<string>;
  try {
    applied = new Set(
      (await read<{ name: string }>('SELECT name FROM schema_migrations')).map((row) => row.name),
    );
  } catch (error) {
    if (!isUndefinedTable(error)) throw error;
    applied = new Set();
  }
  return migrations.map(migrationName).filter((name) => !applied.has(name));
}

/** TypeORM's DataSource for migrations, initialized (`createDataSource`, which loads TypeORM). */
export async function openMigrationDataSource(options: DatabaseOptions): Promise<DataSource> {
  return (await createDataSource(options)).initialize();
}

export { runMigrations } from './data-source.factory';
