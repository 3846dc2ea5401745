import type { DatabaseSchema } from '@ledgerkey/database';
import { installJobQueue } from '@ledgerkey/jobs';
import { MIGRATIONS } from '../../../migrations';

/** What the API and the CLI install at boot: our migrations, then the job queue's schema. */
export const DATABASE_SCHEMA: DatabaseSchema = { migrations: MIGRATIONS, afterMigrations: [installJobQueue] };
