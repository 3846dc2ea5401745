import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Pool } from 'pg';
import { aCompany } from '../support/company.builder';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../support/test-app';
import { testDatabasePool, testDatabaseUrl } from '../support/test-database';
import { TEST_SECRETS_KEY } from '../support/test-secrets';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../..');

/** `npm run cli -- company:create …` as an operator runs it (the built CLI, on the test database). */
function cli(args: string[]) {
  return run(process.execPath, ['dist/apps/api/src/cli.js', ...args], {
    cwd: ROOT,
    // The test key: the CLI boots the application, whose secrets pass must not use a key file of its own.
    env: {
      ...process.env,
      DATABASE_URL: testDatabaseUrl(),
      LOG_LEVEL: 'error',
      SECRETS_KEY: TEST_SECRETS_KEY,
    },
  });
}

function companyCreate(name: string, key: string | undefined, extra: string[] = ['--json']) {
  const keyArgs = key === undefined ? [] : ['--idempotency-key', key];
  return cli([
    'company:create',
    '--name',
    name,
    '--country',
    'LT',
    '--currency',
    'EUR',
    ...keyArgs,
    ...extra,
  ]);
}

describe('operator CLI', () => {
  let t: TestApp;
  let db: Pool;
  beforeAll(async () => {
    t = await startTestApp();
    db = testDatabasePool();
  });
  afterAll(async () => {
    await db.end();
    await t.close();
  });

  async function companiesNamed(name: string): Promise<number> {
    const { rows } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM companies WHERE name = $1',
      [name],
    );
    return rows[0].n;
  }

  it('company:create --json prints { companyId, apiKey }, and the key works', async () => {
    const { stdout } = await companyCreate('UAB CLI', `cli-${randomUUID()}`);

    const created = JSON.parse(stdout) as { companyId: string; apiKey: string };
    expect(Object.keys(created).sort()).toEqual(['apiKey', 'companyId']);
    expect(created.apiKey).toMatch(/^lk_[A-Za-z0-9_-]{43}$/);
    const list = await t.http.get('/v1/sales/invoices').set('Authorization', `Bearer ${created.apiKey}`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ object: 'list', data: [], hasMore: false });
  }, 60_000);

  it('`npm run -s cli -- … --json` prints only the JSON on stdout, without rebuilding a current dist/', async () => {
    const current = await run(process.execPath, ['scripts/build-if-stale.mjs', '--check'], {
      cwd: ROOT,
    }).then(
      () => true,
      () => false,
    );
    // Tests run on a fresh build (npm test builds first); a rebuild here would pull dist/ from under the other suites.
    expect({ distCurrent: current }).toEqual({ distCurrent: true });
    const main = statSync(resolve(ROOT, 'dist/apps/api/src/main.js')).mtimeMs;

    const name = `UAB CLI ${randomUUID()}`;
    const { stdout, stderr } = await run(
      'npm',
      [
        'run',
        '-s',
        'cli',
        '--',
        'company:create',
        '--name',
        name,
        '--country',
        'LT',
        '--currency',
        'EUR',
      ].concat(['--idempotency-key', `cli-${randomUUID()}`, '--json']),
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: testDatabaseUrl(), SECRETS_KEY: TEST_SECRETS_KEY } },
    );

    const created = JSON.parse(stdout) as { companyId: string; apiKey: string };
    expect(stdout).toBe(`${JSON.stringify(created)}\n`);
    expect(Object.keys(created).sort()).toEqual(['apiKey', 'companyId']);
    expect(stderr).not.toMatch(/building/);
    expect(statSync(resolve(ROOT, 'dist/apps/api/src/main.js')).mtimeMs).toBe(main);
    expect(await companiesNamed(name)).toBe(1);
  }, 60_000);

  it('company:create with profile options sets the profile the API answers (legal name defaulting to --name)', async () => {
    const { stdout } = await companyCreate('UAB CLI Profilis', `cli-${randomUUID()}`, [
      '--json',
      ...['--vat-id', 'LT100009876543', '--iban', 'LT601010012345678901', '--city', 'Kaunas'],
    ]);

    const { apiKey } = JSON.parse(stdout) as { apiKey: string };
    const profile = await t.http.get('/v1/company/profile').set('Authorization', `Bearer ${apiKey}`);
    expect(profile.body).toEqual({
      object: 'company_profile',
      legalName: 'UAB CLI Profilis',
      vatId: 'LT100009876543',
      registrationNumber: null,
      address: { street: null, city: 'Kaunas', postalCode: null, countryCode: 'LT' },
      iban: 'LT601010012345678901',
      email: null,
      peppolId: null,
    });
  }, 60_000);

  it('run again with the same --idempotency-key, it prints the same JSON and creates nothing new', async () => {
    const name = `UAB CLI ${randomUUID()}`;
    const key = `cli-${randomUUID()}`;

    const first = await companyCreate(name, key);
    const retry = await companyCreate(name, key);
    const human = await companyCreate(name, key, []);

    expect(retry.stdout).toBe(first.stdout);
    const { companyId, apiKey } = JSON.parse(first.stdout) as { companyId: string; apiKey: string };
    expect(human.stdout).toContain(`company ${companyId}\napi key ${apiKey}\n`);
    expect(human.stdout).toContain('nothing new was created');
    expect(await companiesNamed(name)).toBe(1);
  }, 60_000);

  it('shares its keys with POST /admin/companies: the route replays what the CLI created', async () => {
    const company = aCompany();
    const key = `cli-${randomUUID()}`;
    const { stdout } = await companyCreate(company.build().name, key);

    const replay = await t.http
      .post('/admin/companies')
      .set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .set('Idempotency-Key', key)
      .send(company.build());

    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(`${replay.text}\n`).toBe(stdout);
    expect(await companiesNamed(company.build().name)).toBe(1);
  }, 60_000);

  it('the same key with other input exits 1 with idempotency_key_reused wording; nothing is created', async () => {
    const key = `cli-${randomUUID()}`;
    await companyCreate(`UAB CLI ${randomUUID()}`, key);
    const other = `UAB CLI ${randomUUID()}`;

    await expect(companyCreate(other, key)).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('Idempotency-Key was already used with a different request payload.'),
    });
    expect(await companiesNamed(other)).toBe(0);
  }, 60_000);

  it.each([
    ['without --idempotency-key', undefined, '--idempotency-key is required'],
    ['with a key that is not visible ASCII', 'key with spaces', 'Idempotency-Key header is invalid'],
  ])(
    'refuses to run %s: exit code 1, nothing created',
    async (_name, key, message) => {
      const name = `UAB CLI ${randomUUID()}`;
      await expect(companyCreate(name, key)).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining(message),
      });
      expect(await companiesNamed(name)).toBe(0);
    },
    60_000,
  );

  it('refuses invalid input with exit code 1 and names the field', async () => {
    await expect(
      cli([
        'company:create',
        '--name',
        'UAB CLI',
        '--country',
        'lt',
        '--currency',
        'EUR',
        '--idempotency-key',
        `cli-${randomUUID()}`,
        '--json',
      ]),
    ).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('countryCode') });
  }, 60_000);
});
