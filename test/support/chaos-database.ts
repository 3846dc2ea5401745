import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installSchema, startEmbeddedPostgres, type EmbeddedPostgresHandle } from '@ledgerkey/database';
import { installJobQueue } from '@ledgerkey/jobs';
import { MIGRATIONS } from '../../migrations';
import { freePort } from './api-process';

const DATABASE = 'ledgerkey_chaos';

/**
 * A PostgreSQL server of the chaos suite's own (embedded, in a temporary folder), so the suite
 * may stop and start it: on one fixed port, so the URL every process holds stays valid across
 * the restart. Independent of DATABASE_URL.
 */
export interface ChaosDatabase {
  readonly url: string;
  readonly running: boolean;
  /** Fast shutdown (in-flight transactions roll back, every connection is cut). */
  stop(): Promise<void>;
  /** Starts the stopped server again on the same port and data folder. */
  start(): Promise<void>;
  /** Stops the server (if running) and deletes its folder. */
  destroy(): Promise<void>;
}

/** Initialises the cluster, migrates the database and installs the job queue, as global-setup does. */
export async function startChaosDatabase(): Promise<ChaosDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ledgerkey-chaos-'));
  const port = await freePort();
  const boot = (): Promise<EmbeddedPostgresHandle> =>
    startEmbeddedPostgres({ dataDir, database: DATABASE, port });
  let server: EmbeddedPostgresHandle | undefined = await boot();
  const url = server.url;

  await installSchema(
    url,
    { migrations: MIGRATIONS, afterMigrations: [installJobQueue] },
    { log: () => undefined, debug: () => undefined },
  );

  const stop = async (): Promise<void> => {
    const stopping = server;
    server = undefined;
    await stopping?.stop();
  };
  return {
    url,
    get running() {
      return server !== undefined;
    },
    stop,
    async start() {
      if (server) throw new Error('the chaos database is already running');
      server = await boot();
      if (server.url !== url) throw new Error(`the chaos database moved: ${server.url} instead of ${url}`);
    },
    async destroy() {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
