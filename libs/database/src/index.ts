export { defaultPoolSize } from './database-options';
export type { DatabaseOptions } from './database-options';
export {
  migrationName,
  openMigrationDataSource,
  pendingMigrations,
  runMigrations,
} from './schema-migrations';
export type { Migration } from './schema-migrations';
export { DatabaseModule, SchemaState, transactionalPlugin } from './database.module';
export { parseDatabaseConfig } from './database-config';
export type { DatabaseConfig } from './database-config';
export { installSchema, prepareDatabase } from './prepare-database';
export type { DatabaseHandle, DatabaseSchema } from './prepare-database';
export { startEmbeddedPostgres, quoteIdentifier } from './embedded-postgres';
export type { EmbeddedPostgresHandle, EmbeddedPostgresOptions } from './embedded-postgres';
export { TransactionHost, Transactional, Propagation } from '@nestjs-cls/transactional';
export { DatabasePool, type Sql } from './sql';
export { closing } from './close-pool';
export type { PgTransactionalAdapter } from './pg-transactions';
export {
  isUniqueViolation,
  constraintName,
  isConnectionLoss,
  isTransientDatabaseFailure,
} from './postgres-errors';
export { DeferredWrites } from './deferred-writes';
export type { DeferredWrite } from './deferred-writes';
export { queryRows } from './sql-client';
export type { PgQueryable, SqlClient } from './sql-client';
export { keysetPage, pageOf } from './keyset-page';
export type { BindParameter, KeysetSource, ListCondition, ListOrder, Page, PageRequest } from './keyset-page';
export { TenantReader } from './tenant-reader';
export { CodePointLength, codePointLength } from './text-length.validator';
export {
  commandMetadataOf,
  METADATA_LIMITS,
  MetadataProperty,
  MetadataViewProperty,
  metadataOf,
  metadataProblem,
} from './metadata';
export type { Metadata } from './metadata';
