import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'pg';
import { Webhook } from 'standardwebhooks';
import { parseSecretsKey, SealedValueUnreadableError, SecretBox } from '@ledgerkey/secrets';
import { startApiProcess, stopAllApiProcesses } from '../support/api-process';
import {
  createIsolatedDatabase,
  type IsolatedDatabase,
  isolatedDatabasePool,
} from '../support/isolated-database';
import { WebhookReceiver } from '../support/webhook-receiver';
import { startWorkerProcess, stopAllWorkerProcesses, type WorkerProcess } from '../support/worker-process';

/** More than two of the boot pass's 200-row batches, so two processes booting together interleave. */
const LEGACY_ENDPOINTS = 450;
const DELIVERY_TIMEOUT_MS = 20_000;

/**
 * Processes on a database of their own: these tests change which key the stored secrets are
 * sealed under, which must never happen to the shared test database (other suites' processes
 * hold the test key).
 */
describe('secrets at rest: boot sealing, the shared key file, rotation', () => {
  let database: IsolatedDatabase;
  let db: Pool;
  let dataDir: string;
  let receiver: WebhookReceiver;
  const companyId = randomUUID();
  /** Endpoint id → its secret in clear, as endpoints registered before sealing stored it. */
  const legacySecrets = new Map<string, string>();
  /** The one legacy endpoint subscribed to invoice.created, pointing at the receiver. */
  let hookEndpointId: string;

  /** Without SECRETS_KEY: the key comes from `${DATA_DIR}/secrets.key`, created on first boot. */
  const env = (extra: Record<string, string> = {}): Record<string, string> => ({
    DATABASE_URL: database.url,
    DATA_DIR: dataDir,
    SECRETS_KEY: '',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_LEASE_SECONDS: '5',
    WEBHOOK_SWEEP_INTERVAL_MS: '500',
    ...extra,
  });

  async function storedSecrets(): Promise<Map<string, string>> {
    const { rows } = await db.query<{ id: string; secret: string }>(
      `SELECT id, secret FROM webhook_endpoints WHERE company_id = $1`,
      [companyId],
    );
    return new Map(rows.map((row) => [row.id, row.secret]));
  }

  /** Writes an invoice.created event and its deliveries, as an issued invoice would. */
  async function anEvent(): Promise<string> {
    const eventId = randomUUID();
    await db.query(
      `WITH next AS (
         INSERT INTO event_sequences AS s (company_id, last_position) VALUES ($2, 1)
         ON CONFLICT (company_id) DO UPDATE SET last_position = s.last_position + 1 RETURNING last_position
       ), event AS (
         INSERT INTO events (id, company_id, position, type, data, created_at)
         SELECT $1::uuid, $2, next.last_position, 'invoice.created',
                json_build_object('object', json_build_object('id', $1::text)), now()
           FROM next
         RETURNING id, company_id
       )
       SELECT fan_out_event(company_id, id, 'invoice.created') FROM event`,
      [eventId, companyId],
    );
    return eventId;
  }

  beforeAll(async () => {
    database = await createIsolatedDatabase('secrets');
    db = isolatedDatabasePool(database, 2);
    dataDir = mkdtempSync(join(tmpdir(), 'ledgerkey-secrets-'));
    receiver = await WebhookReceiver.start();
    await db.query(
      `INSERT INTO companies (id, name, country_code, currency) VALUES ($1, 'Legacy', 'LT', 'EUR')`,
      [companyId],
    );
    const ids: string[] = [];
    const urls: string[] = [];
    for (let index = 0; index < LEGACY_ENDPOINTS; index += 1) {
      const id = randomUUID();
      ids.push(id);
      urls.push(index === 0 ? receiver.url() : `https://example.com/hook-${index}`);
      legacySecrets.set(id, `whsec_${randomBytes(32).toString('base64')}`);
    }
    hookEndpointId = ids[0];
    // Rows as the previous version wrote them: the secret in clear.
    await db.query(
      `INSERT INTO webhook_endpoints (id, company_id, url, enabled_events, secret)
       SELECT v.id, $2, v.url,
              CASE WHEN v.id = $1[1] THEN '{invoice.created}'::text[] ELSE '{credit_note.created}'::text[] END,
              v.secret
         FROM unnest($1::uuid[], $3::text[], $4::text[]) AS v (id, url, secret)`,
      [ids, companyId, urls, ids.map((id) => legacySecrets.get(id))],
    );
  }, 60_000);

  afterAll(async () => {
    await stopAllWorkerProcesses();
    await stopAllApiProcesses();
    await receiver?.close();
    await db?.end();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('two API processes booting together share one generated key file and seal every plaintext secret in place', async () => {
    const [a, b] = await Promise.all([startApiProcess({ env: env() }), startApiProcess({ env: env() })]);
    const keyFile = join(dataDir, 'secrets.key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const box = new SecretBox({ current: parseSecretsKey(readFileSync(keyFile, 'utf8')) });

    const stored = await storedSecrets();
    expect(stored.size).toBe(LEGACY_ENDPOINTS);
    for (const [id, secret] of stored) {
      expect(box.isSealedWithCurrentKey(secret)).toBe(true);
      expect(box.open(secret)).toBe(legacySecrets.get(id));
    }
    expect([...stored.values()].filter((secret) => secret.includes('whsec_'))).toEqual([]);
    expect(a.output() + b.output()).not.toMatch(/does not have/);
    await Promise.all([a.kill(), b.kill()]);
  });

  it('a standalone worker sharing DATA_DIR signs with the sealed legacy secret: the original whsec_ verifies', async () => {
    const worker = await startWorkerProcess(env());
    try {
      const eventId = await anEvent();
      await receiver.waitFor(
        (requests) => requests.some((r) => r.headers['webhook-id'] === eventId),
        DELIVERY_TIMEOUT_MS,
      );
      const [request] = receiver.requestsFor(eventId);
      const verified = new Webhook(legacySecrets.get(hookEndpointId) as string).verify(
        request.body,
        request.headers,
      );
      expect(verified).toMatchObject({ id: eventId, type: 'invoice.created' });
    } finally {
      await worker.kill();
    }
  });

  it('rotation: a boot with SECRETS_KEY and SECRETS_KEY_PREVIOUS re-seals every secret under the new key; a worker without it sends nothing and records why', async () => {
    const fileKey = readFileSync(join(dataDir, 'secrets.key'), 'utf8').trim();
    const newKey = randomBytes(32).toString('base64');
    // A worker still on the old key (not yet restarted with the new configuration).
    let worker: WorkerProcess = await startWorkerProcess(env());

    const api = await startApiProcess({ env: env({ SECRETS_KEY: newKey, SECRETS_KEY_PREVIOUS: fileKey }) });
    await api.kill();
    const newBox = new SecretBox({ current: parseSecretsKey(newKey) });
    const oldBox = new SecretBox({ current: parseSecretsKey(fileKey) });
    const stored = await storedSecrets();
    for (const [id, secret] of stored) {
      expect(newBox.isSealedWithCurrentKey(secret)).toBe(true);
      expect(newBox.open(secret)).toBe(legacySecrets.get(id));
    }
    expect(() => oldBox.open(stored.get(hookEndpointId) as string)).toThrow(SealedValueUnreadableError);

    const eventId = await anEvent();
    let attempts: Array<{ result: string; status_code: number | null; error: string }> = [];
    const deadline = Date.now() + DELIVERY_TIMEOUT_MS;
    while (attempts.length === 0 && Date.now() < deadline) {
      ({ rows: attempts } = await db.query(
        `SELECT result, status_code, error FROM webhook_attempts WHERE company_id = $1 AND event_id = $2`,
        [companyId, eventId],
      ));
      if (attempts.length === 0) await sleep(100);
    }
    await worker.kill();
    expect(attempts[0]).toEqual({
      result: 'failed',
      status_code: null,
      error:
        'not sent: the signing secret cannot be read with this server’s secrets key; rotate the endpoint',
    });
    expect(worker.output()).toMatch(
      /not sent, the signing secret of endpoint .* is unreadable: .*sealed under key/,
    );
    expect(receiver.requestsFor(eventId)).toEqual([]);

    // Restarted with the new key, a worker delivers the retry, signed with the same secret.
    worker = await startWorkerProcess(env({ SECRETS_KEY: newKey }));
    try {
      await receiver.waitFor(
        (requests) => requests.some((r) => r.headers['webhook-id'] === eventId),
        DELIVERY_TIMEOUT_MS,
      );
      const [request] = receiver.requestsFor(eventId);
      expect(() =>
        new Webhook(legacySecrets.get(hookEndpointId) as string).verify(request.body, request.headers),
      ).not.toThrow();
    } finally {
      await worker.kill();
    }
  }, 60_000);

  it('the schema stores a secret only sealed (v1 format) or as a legacy whsec_ awaiting its seal', async () => {
    const insert = (secret: string): Promise<unknown> =>
      db.query(
        `INSERT INTO webhook_endpoints (id, company_id, url, enabled_events, secret)
         VALUES ($1, $2, 'https://example.com/hook', '{*}', $3)`,
        [randomUUID(), companyId, secret],
      );
    const box = new SecretBox({ current: randomBytes(32) });
    for (const bad of [
      'plain',
      'sealed:v1:abc',
      'sealed:v2:' + box.seal('x').slice('sealed:v1:'.length),
      'whsec_short',
    ]) {
      await expect(insert(bad)).rejects.toThrow(/ck_webhook_endpoints_secret/);
    }
  });

  it('a boot with an unrelated key changes nothing and says which secrets it cannot read', async () => {
    const before = await storedSecrets();
    const api = await startApiProcess({ env: env({ SECRETS_KEY: randomBytes(32).toString('base64') }) });
    await api.kill();
    expect(await storedSecrets()).toEqual(before);
    expect(api.output()).toContain(
      `${LEGACY_ENDPOINTS} webhook secrets are sealed under a key this process does not have`,
    );
  });
});
