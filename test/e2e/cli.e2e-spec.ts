import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { startTestApp, type TestApp } from '../support/test-app';
import { testDatabaseUrl } from '../support/test-database';
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

describe('operator CLI', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('company:create --json prints { companyId, apiKey }, and the key works', async () => {
    const { stdout } = await cli([
      'company:create',
      '--name',
      'UAB CLI',
      '--country',
      'LT',
      '--currency',
      'EUR',
      '--json',
    ]);

    const created = JSON.parse(stdout) as { companyId: string; apiKey: string };
    expect(Object.keys(created).sort()).toEqual(['apiKey', 'companyId']);
    expect(created.apiKey).toMatch(/^lk_[A-Za-z0-9_-]{43}$/);
    const list = await t.http.get('/v1/sales/invoices').set('Authorization', `Bearer ${created.apiKey}`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ object: 'list', data: [], hasMore: false });
  }, 60_000);

  it('refuses invalid input with exit code 1 and names the field', async () => {
    await expect(
      cli(['company:create', '--name', 'UAB CLI', '--country', 'lt', '--currency', 'EUR', '--json']),
    ).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('countryCode') });
  }, 60_000);
});
