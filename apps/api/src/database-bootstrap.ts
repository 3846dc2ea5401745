import {
  createDataSource,
  runMigrations,
  startEmbeddedPostgres,
  type EmbeddedPostgresHandle,
} from '@ledgerkey/database';
import type { Logger } from '@nestjs/common';
import { installJobQueue } from '@ledgerkey/jobs';
import { MIGRATIONS } from '../../../migrations';
import type { AppConfig } from './config';

export interface DatabaseHandle {
  url: string;
  embedded: EmbeddedPostgresHandle | undefined;
}

/** DATABASE_URL if set, else the embedded server under DATA_DIR; then pending migrations (ours, then the job queue's). */
export async function prepareDatabase(config: AppConfig, logger: Logger): Promise<DatabaseHandle> {
  let embedded: EmbeddedPostgresHandle | undefined;
  let url = config.databaseUrl;
  if (url === undefined) {
    logger.log(`DATABASE_URL not set: using embedded PostgreSQL under ${config.dataDir}/`);
    embedded = await startEmbeddedPostgres({
      dataDir: config.dataDir,
      database: 'ledgerkey',
      log: (message) => logger.debug(message),
    });
    url = embedded.url;
  }
  const dataSource = createDataSource({
    url,
    poolSize: 2,
    applicationName: 'ledgerkey-migrate',
    migrations: MIGRATIONS,
  });
  await dataSource.initialize();
  try {
    const applied = await runMigrations(dataSource);
    if (applied.length > 0) logger.log(`applied migrations: ${applied.join(', ')}`);
  } finally {
    await dataSource.destroy();
  }
  await installJobQueue(url);
  return { url, embedded };
}
