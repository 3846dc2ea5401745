import { type ChildProcess, execSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import request from 'supertest';
import { anInvoice, newKey } from '../support/invoice.builder';
import { API_ENTRY, apiStartCommand } from '../support/start-command';

const ROOT = resolve(__dirname, '../..');
const MAIN = join(ROOT, API_ENTRY);
const BUILD_LOCK = '/tmp/ledgerkey-build.lock';
const BOOT_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 20_000;
const LISTENING = /ledgerkey listening on (http:\/\/\S+)/;
const DEMO_KEY = /Demo API key: (lk_[A-Za-z0-9_-]+)/;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The API as `npm start` runs it (`node <flags> dist/apps/api/src/main.js`), with its output captured. */
class ServerProcess {
  output = '';
  readonly exited: Promise<Exit>;
  private readonly child: ChildProcess;
  private readonly listeners = new Set<() => void>();

  /** `ownProcessGroup`: the server leads a process group, as a terminal's foreground job does. */
  constructor(env: NodeJS.ProcessEnv, ownProcessGroup = false) {
    const start = apiStartCommand(ROOT);
    this.child = spawn(process.execPath, start.args, {
      cwd: ROOT,
      env: { ...start.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: ownProcessGroup,
    });
    const append = (chunk: Buffer): void => {
      this.output += chunk.toString('utf8');
      for (const listener of this.listeners) listener();
    };
    this.child.stdout?.on('data', append);
    this.child.stderr?.on('data', append);
    this.exited = new Promise((resolveExit) =>
      this.child.once('exit', (code, signal) => {
        resolveExit({ code, signal });
        for (const listener of this.listeners) listener();
      }),
    );
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves with the first match of `pattern` in the output. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
    return new Promise((resolveMatch, reject) => {
      const check = (): void => {
        const match = pattern.exec(this.output);
        if (match) {
          done();
          resolveMatch(match);
        } else if (!this.running) {
          done();
          reject(new Error(`the server exited before printing ${pattern}:\n${this.output}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no ${pattern} within ${timeoutMs} ms:\n${this.output}`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      this.listeners.add(check);
      check();
    });
  }

  /**
   * Sends the signal (`group`: to the server's whole process group, as Ctrl-C in a terminal does);
   * resolves with the exit, or null if the process outlived the timeout.
   */
  async stop(signal: NodeJS.Signals, timeoutMs: number, group = false): Promise<Exit | null> {
    if (this.running) {
      if (group) process.kill(-(this.child.pid as number), signal);
      else this.child.kill(signal);
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolveTimeout) => {
      timer = setTimeout(() => resolveTimeout(null), timeoutMs);
    });
    const exit = await Promise.race([this.exited, timeout]);
    clearTimeout(timer);
    return exit;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolvePort(port));
    });
  });
}

/**
 * Holds a shared flock on the build lock until released: builders take it exclusively and
 * `nest build` empties dist/ first, so a server must not load dist/ while one is running.
 */
function holdSharedBuildLock(): Promise<() => Promise<void>> {
  return new Promise((resolveLock, reject) => {
    const holder = spawn('flock', ['--shared', BUILD_LOCK, '--command', 'echo locked && exec cat'], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const closed = new Promise<void>((resolveClose) => holder.once('close', () => resolveClose()));
    holder.once('error', reject);
    holder.stdout.once('data', () =>
      resolveLock(async () => {
        holder.stdin.end();
        await closed;
      }),
    );
  });
}

/** Starts a server and waits until it listens; dist/ is protected from builders meanwhile. */
async function startServer(env: NodeJS.ProcessEnv, ownProcessGroup = false): Promise<ServerProcess> {
  const release = await holdSharedBuildLock();
  try {
    const server = new ServerProcess(env, ownProcessGroup);
    await server.waitFor(LISTENING, BOOT_TIMEOUT_MS);
    return server;
  } finally {
    await release();
  }
}

function postmasterPidFile(dataDir: string): string {
  return join(dataDir, 'postgres', 'postmaster.pid');
}

function postmasterPid(dataDir: string): number | null {
  const file = postmasterPidFile(dataDir);
  if (!existsSync(file)) return null;
  const pid = Number.parseInt(readFileSync(file, 'utf8').split('\n')[0], 10);
  return Number.isInteger(pid) ? pid : null;
}

/** A live process (a zombie awaiting its reaper counts as gone). */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function eventually(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolveDelay) => setTimeout(resolveDelay, 100));
  }
  return true;
}

/**
 * Acceptance: "npm install && npm start on a fresh clone (no DATABASE_URL) serves
 * /health/ready 200 and /docs, and prints a working API key".
 */
describe('zero setup: the built server without DATABASE_URL', () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  const servers: ServerProcess[] = [];

  let first: ServerProcess;
  let baseUrl: string;
  let demoKey: string;
  let invoice: { id: string; text: string };
  let embeddedPid: number;
  let secretsKey: string;

  beforeAll(async () => {
    if (!existsSync(MAIN)) {
      execSync(`flock ${BUILD_LOCK} npm run build`, { cwd: ROOT, stdio: 'inherit', timeout: 300_000 });
    }
    dataDir = mkdtempSync(join(tmpdir(), 'ledgerkey-zero-setup-'));
    env = { ...process.env, DATA_DIR: dataDir, HOST: '127.0.0.1' };
    for (const name of [
      'DATABASE_URL',
      'LEDGERKEY_TEST_DATABASE',
      'ADMIN_API_TOKEN',
      'SEED_DEMO_COMPANY',
      'LOG_LEVEL',
      'SECRETS_KEY',
      'SECRETS_KEY_PREVIOUS',
      'PAYMENT_PROVIDER_URL',
      'PAYMENT_PROVIDER_API_KEY',
      'PAYMENT_PROVIDER_WEBHOOK_SECRET',
    ]) {
      delete env[name];
    }
  }, 320_000);

  afterAll(async () => {
    for (const server of servers) {
      if (server.running) await server.stop('SIGKILL', 5_000);
    }
    const orphan = postmasterPid(dataDir);
    if (orphan !== null && isAlive(orphan)) {
      process.kill(orphan, 'SIGQUIT');
      await eventually(() => !isAlive(orphan), 10_000);
    }
    rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  it(
    'boots an embedded PostgreSQL under DATA_DIR and prints its URLs and a demo API key',
    async () => {
      const port = await freePort();
      first = await startServer({ ...env, PORT: String(port) });
      servers.push(first);

      baseUrl = (await first.waitFor(LISTENING, 1_000))[1];
      demoKey = (await first.waitFor(DEMO_KEY, 5_000))[1];

      expect(baseUrl).toBe(`http://127.0.0.1:${port}`);
      expect(first.output).toContain(`Swagger UI:   ${baseUrl}/docs`);
      expect(demoKey).toMatch(/^lk_[A-Za-z0-9_-]{43}$/);
      expect(existsSync(join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true);
      const pid = postmasterPid(dataDir);
      expect(pid).not.toBeNull();
      embeddedPid = pid as number;
      expect(isAlive(embeddedPid)).toBe(true);
      // No SECRETS_KEY: a key generated into DATA_DIR, readable by its owner only, and said so.
      const keyFile = join(dataDir, 'secrets.key');
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      secretsKey = readFileSync(keyFile, 'utf8');
      expect(Buffer.from(secretsKey.trim(), 'base64')).toHaveLength(32);
      expect(first.output).toContain(`SECRETS_KEY is not set: generated a key into ${keyFile}`);
    },
    BOOT_TIMEOUT_MS + 10_000,
  );

  it('serves /health/live and /health/ready', async () => {
    const live = await request(baseUrl).get('/health/live');
    const ready = await request(baseUrl).get('/health/ready');

    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'ok' });
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready' });
  });

  it('serves Swagger UI at /docs and an OpenAPI document requiring Idempotency-Key on create', async () => {
    const docs = await request(baseUrl).get('/docs');
    const openApi = await request(baseUrl).get('/docs/openapi.json');

    expect(docs.status).toBe(200);
    expect(docs.headers['content-type']).toMatch(/^text\/html/);
    expect(docs.text).toContain('swagger-ui');
    expect(openApi.status).toBe(200);
    expect(openApi.headers['content-type']).toMatch(/^application\/json/);
    const create = (openApi.body as { paths: Record<string, Record<string, { parameters?: unknown[] }>> })
      .paths['/v1/sales/invoices/create']?.post;
    expect(create).toBeDefined();
    expect(create.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: true }),
      ]),
    );
  });

  it('the printed API key works: it creates an invoice (201)', async () => {
    const response = await request(baseUrl)
      .post('/v1/sales/invoices/create')
      .set('Authorization', `Bearer ${demoKey}`)
      .set('Idempotency-Key', newKey('zero-setup'))
      .send(anInvoice().withOrderId().withLine().build());

    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ number: 'INV-000001', currency: 'EUR', grossTotal: 12100 });
    invoice = { id: response.body.id as string, text: response.text };
  });

  it('pays the invoice through the provider sandbox it started under DATA_DIR (no PAYMENT_PROVIDER_URL)', async () => {
    expect(first.output).toMatch(/Payments: {5}provider sandbox at http:\/\/127\.0\.0\.1:\d+ /);
    expect(existsSync(join(dataDir, 'provider-sandbox', 'state.jsonl'))).toBe(true);
    const response = await request(baseUrl)
      .post('/v1/payments/create')
      .set('Authorization', `Bearer ${demoKey}`)
      .set('Idempotency-Key', newKey('zero-setup-payment'))
      .send({ invoiceId: invoice.id, paymentMethod: 'pm_card_visa' });

    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ status: 'succeeded', amount: 12100, provider: 'sandbox' });
    const paid = await request(baseUrl)
      .get(`/v1/sales/invoices/${invoice.id}`)
      .set('Authorization', `Bearer ${demoKey}`);
    expect(paid.body).toMatchObject({ paidTotal: 12100 });
    invoice = { id: invoice.id, text: paid.text };
  });

  it("the sandbox's webhooks come back to the API's receiver; a payout becomes a settlement", async () => {
    const sandboxUrl = /Payments: {5}provider sandbox at (http:\/\/127\.0\.0\.1:\d+) /.exec(
      first.output,
    )?.[1];
    const companyId = /Demo company: (\S+)/.exec(first.output)?.[1];
    const sandboxKey = readFileSync(join(dataDir, 'provider-sandbox', 'api-key'), 'utf8').trim();
    // Applied, or parked when it overtook the payment's own answer: received and verified either way.
    const applied = async (): Promise<number> => {
      const metrics = await request(baseUrl).get('/metrics');
      const count = (result: string): number =>
        Number(
          new RegExp(`^ledgerkey_provider_events_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(
            metrics.text,
          )?.[1] ?? 0,
        );
      return count('applied') + count('parked');
    };
    // charge.succeeded of the payment above, signed by the sandbox, verified with its secret.
    let seen = 0;
    for (const deadline = Date.now() + 15_000; seen < 1 && Date.now() < deadline;) {
      seen = await applied();
      if (seen < 1) await new Promise((done) => setTimeout(done, 200));
    }
    expect(seen).toBeGreaterThanOrEqual(1);

    const payout = await fetch(`${sandboxUrl}/v1/payouts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sandboxKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ companyId }),
    });
    expect(payout.status).toBe(201);
    const payoutId = ((await payout.json()) as { data: Array<{ id: string }> }).data[0].id;
    let settlements: Array<{ payoutId: string; source: string }> = [];
    for (const deadline = Date.now() + 15_000; settlements.length === 0 && Date.now() < deadline;) {
      const list = await request(baseUrl).get('/v1/settlements').set('Authorization', `Bearer ${demoKey}`);
      settlements = (list.body as { data: typeof settlements }).data;
      if (settlements.length === 0) await new Promise((done) => setTimeout(done, 200));
    }
    expect(settlements).toEqual([expect.objectContaining({ payoutId, source: 'provider' })]);
  });

  it(
    'SIGTERM stops the server and its embedded PostgreSQL',
    async () => {
      const exit = await first.stop('SIGTERM', STOP_TIMEOUT_MS);

      expect(exit).not.toBeNull();
      expect(exit?.code === 0 || exit?.signal === 'SIGTERM').toBe(true);
      expect(await eventually(() => !existsSync(postmasterPidFile(dataDir)), 5_000)).toBe(true);
      expect(isAlive(embeddedPid)).toBe(false);
    },
    STOP_TIMEOUT_MS + 10_000,
  );

  it(
    'restarted on the same DATA_DIR it prints no new key; the old key and the invoice are still there',
    async () => {
      const second = await startServer({ ...env, PORT: String(await freePort()) });
      servers.push(second);
      const secondUrl = (await second.waitFor(LISTENING, 1_000))[1];

      expect(second.output).not.toMatch(/Demo API key/);
      expect(readFileSync(join(dataDir, 'secrets.key'), 'utf8')).toBe(secretsKey);
      const fetched = await request(secondUrl)
        .get(`/v1/sales/invoices/${invoice.id}`)
        .set('Authorization', `Bearer ${demoKey}`);
      expect(fetched.status).toBe(200);
      expect(fetched.text).toBe(invoice.text);
      const list = await request(secondUrl)
        .get('/v1/sales/invoices')
        .set('Authorization', `Bearer ${demoKey}`);
      expect(list.body.data.map((item: { id: string }) => item.id)).toEqual([invoice.id]);
      const ready = await request(secondUrl).get('/health/ready');
      expect(ready.status).toBe(200);

      const restartedPid = postmasterPid(dataDir);
      expect(restartedPid).not.toBeNull();
      const exit = await second.stop('SIGTERM', STOP_TIMEOUT_MS);
      expect(exit?.code === 0 || exit?.signal === 'SIGTERM').toBe(true);
      expect(await eventually(() => !existsSync(postmasterPidFile(dataDir)), 5_000)).toBe(true);
      expect(isAlive(restartedPid as number)).toBe(false);
    },
    BOOT_TIMEOUT_MS + STOP_TIMEOUT_MS + 10_000,
  );

  it(
    'logs JSON from its first line; Ctrl-C (SIGINT to its whole process group) stops it as cleanly as SIGTERM',
    async () => {
      const third = await startServer({ ...env, PORT: String(await freePort()) }, true);
      servers.push(third);
      const thirdUrl = (await third.waitFor(LISTENING, 1_000))[1];
      const pid = postmasterPid(dataDir);
      expect(pid).not.toBeNull();
      // Routine requests (a scrape, the UI's assets, probes) are not logged at info; others are.
      await request(thirdUrl).get('/metrics').expect(200);
      await request(thirdUrl).get('/docs/swagger-ui.css').expect(200);
      await request(thirdUrl).get('/health/ready').expect(200);
      await request(thirdUrl).get('/v1/sales/invoices').expect(401);
      await third.waitFor(/"url":"\/v1\/sales\/invoices"/, 5_000);

      const exit = await third.stop('SIGINT', STOP_TIMEOUT_MS, true);

      expect(exit).toEqual({ code: 0, signal: null });
      expect(await eventually(() => !existsSync(postmasterPidFile(dataDir)), 5_000)).toBe(true);
      expect(isAlive(pid as number)).toBe(false);
      // The start banner (for people) aside, every line is a JSON log line, boot lines included.
      const banner = /^(ledgerkey listening on | {2}[A-Z][A-Za-z ]+: )/;
      const lines = third.output.split('\n').filter((line) => line !== '' && !banner.test(line));
      const logged = lines.map((line) => {
        try {
          return JSON.parse(line) as { level: string; msg: string; req?: { url: string } };
        } catch {
          return { level: 'not JSON', msg: line };
        }
      });
      expect(logged.filter((line) => line.level === 'not JSON')).toEqual([]);
      const messages = logged.map((line) => line.msg);
      expect(messages).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^applied migrations: |^no migrations to apply|^DATABASE_URL not set/),
          expect.stringMatching(/^job worker started in this process/),
          'SIGINT received: stopping (at most 10000 ms)',
          expect.stringMatching(/^stopped in \d+ ms$/),
        ]),
      );
      // No error or warning on the way down (before: the database got the SIGINT too, and the job
      // runner's connections broke: "Error occurred attempting to UNLISTEN").
      const stopAt = messages.indexOf('SIGINT received: stopping (at most 10000 ms)');
      expect(logged.slice(stopAt).filter((line) => line.level !== 'info')).toEqual([]);
      expect(third.output).not.toMatch(/UNLISTEN|connection lost/);
      expect(logged.filter((line) => line.req).map((line) => line.req?.url)).toEqual(['/v1/sales/invoices']);
    },
    BOOT_TIMEOUT_MS + STOP_TIMEOUT_MS + 10_000,
  );
});
