import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Pool } from 'pg';
import { newKey } from '../support/invoice.builder';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool, testDatabaseUrl } from '../support/test-database';
import { TEST_SECRETS_KEY } from '../support/test-secrets';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../..');

/** `npm run cli -- …` as an operator runs it (the built CLI, on the test database). */
async function cli(args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, ['dist/apps/api/src/cli.js', ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: testDatabaseUrl(),
      LOG_LEVEL: 'error',
      SECRETS_KEY: TEST_SECRETS_KEY,
    },
  });
  return stdout;
}

async function cliFails(args: string[]): Promise<string> {
  const failure = (await cli(args).then(
    () => {
      throw new Error(`cli ${args.join(' ')} succeeded`);
    },
    (error: unknown) => error,
  )) as { code: number; stderr: string };
  expect(failure.code).toBe(1);
  return failure.stderr;
}

interface KeyJson {
  id: string;
  scope: string;
  name: string | null;
  revokedAt: string | null;
  secret?: string;
}

describe('operator CLI: companies and API keys', () => {
  let t: TestApp;
  let db: Pool;
  let company: TestCompany;

  beforeAll(async () => {
    t = await startTestApp();
    db = testDatabasePool();
    company = await t.newCompany({ name: `CLI keys ${newKey()}` });
  });
  afterAll(async () => {
    await db.end();
    await t.close();
  });

  function api(secret: string) {
    return t.http.get('/v1/api-keys').set('Authorization', `Bearer ${secret}`);
  }

  it('company:list --json lists the company with its active key count', async () => {
    const { data } = JSON.parse(await cli(['company:list', '--json'])) as {
      data: Array<{ id: string; name: string; activeApiKeys: number }>;
    };
    expect(data.find((c) => c.id === company.companyId)).toMatchObject({ activeApiKeys: 1 });
  });

  it('api-key:create makes a working key; a retry with the same --idempotency-key prints the same key', async () => {
    const key = newKey('cli-key');
    const args = [
      'api-key:create',
      '--company',
      company.companyId,
      '--scope',
      'read_only',
      '--name',
      'Auditor',
    ];

    const first = await cli([...args, '--idempotency-key', key, '--json']);
    const again = await cli([...args, '--idempotency-key', key, '--json']);

    expect(again).toBe(first);
    const created = JSON.parse(first) as KeyJson;
    expect(created).toMatchObject({ scope: 'read_only', name: 'Auditor', revokedAt: null });
    expect((await api(created.secret as string)).status).toBe(200);
    const human = await cli([...args, '--idempotency-key', key]);
    expect(human).toContain(`api key ${created.secret}`);
    expect(human).toContain('nothing new was made');
  });

  it('api-key:list --json shows every key, never a secret', async () => {
    const output = await cli(['api-key:list', '--company', company.companyId, '--json']);
    const { data } = JSON.parse(output) as { data: KeyJson[] };
    expect(data.length).toBeGreaterThanOrEqual(1);
    expect(output).not.toContain(company.apiKey.slice(9));
    for (const key of data) expect(key).not.toHaveProperty('secret');
  });

  it('api-key:rotate replaces the last read_write key: the new one works, the old one is refused', async () => {
    const other = await t.newCompany();
    const { data } = JSON.parse(await cli(['api-key:list', '--company', other.companyId, '--json'])) as {
      data: KeyJson[];
    };
    const key = newKey('cli-rotate');
    const rotateArgs = [
      'api-key:rotate',
      '--company',
      other.companyId,
      '--key',
      data[0].id,
      '--idempotency-key',
      key,
    ];

    const rotated = JSON.parse(await cli([...rotateArgs, '--json'])) as {
      created: KeyJson;
      revoked: KeyJson;
    };
    const retried = JSON.parse(await cli([...rotateArgs, '--json'])) as { created: KeyJson };

    expect(rotated.revoked).toMatchObject({ id: data[0].id, revokedAt: expect.any(String) });
    expect(rotated.created).toMatchObject({ scope: 'read_write', revokedAt: null });
    expect(retried.created.secret).toBe(rotated.created.secret);
    expect((await api(rotated.created.secret as string)).status).toBe(200);
    expect((await api(other.apiKey)).status).toBe(401);
    const active = await db.query(`SELECT 1 FROM api_keys WHERE company_id = $1 AND revoked_at IS NULL`, [
      other.companyId,
    ]);
    expect(active.rowCount).toBe(1);
  });

  it('api-key:revoke revokes; the last read_write key is refused with its code', async () => {
    const other = await t.newCompany();
    const extra = JSON.parse(
      await cli([
        'api-key:create',
        '--company',
        other.companyId,
        '--scope',
        'read_write',
        '--idempotency-key',
        newKey(),
        '--json',
      ]),
    ) as KeyJson;

    const revoked = JSON.parse(
      await cli(['api-key:revoke', '--company', other.companyId, '--key', extra.id, '--json']),
    ) as KeyJson;
    expect(revoked.revokedAt).not.toBeNull();
    expect((await api(extra.secret as string)).status).toBe(401);

    const { data } = JSON.parse(await cli(['api-key:list', '--company', other.companyId, '--json'])) as {
      data: KeyJson[];
    };
    const stderr = await cliFails(['api-key:revoke', '--company', other.companyId, '--key', data[0].id]);
    expect(stderr).toMatch(/^last_read_write_key: /);
  });

  it('refuses an unknown company, a missing option and a bad scope, naming them', async () => {
    expect(await cliFails(['api-key:list', '--company', '00000000-0000-4000-8000-000000000000'])).toContain(
      'no company',
    );
    expect(await cliFails(['api-key:revoke', '--company', company.companyId])).toContain('--key is required');
    expect(
      await cliFails([
        'api-key:create',
        '--company',
        company.companyId,
        '--scope',
        'admin',
        '--idempotency-key',
        'k',
      ]),
    ).toContain('scope');
  });
});
