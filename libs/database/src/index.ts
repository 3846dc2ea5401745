export { createDataSource, runMigrations, migrationsUpToDate } from './data-source.factory';
export type { DatabaseOptions } from './data-source.factory';
export { DatabaseModule, transactionalPlugin } from './database.module';
export { startEmbeddedPostgres, quoteIdentifier } from './embedded-postgres';
export type { EmbeddedPostgresHandle, EmbeddedPostgresOptions } from './embedded-postgres';
export { TransactionHost, Transactional, Propagation } from '@nestjs-cls/transactional';
export type { TransactionalAdapterTypeOrm as TypeOrmTransactionalAdapter } from '@nestjs-cls/transactional-adapter-typeorm';
export { isUniqueViolation, constraintName } from './postgres-errors';
