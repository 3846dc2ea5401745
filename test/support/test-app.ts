import { randomUUID } from 'node:crypto';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { loadConfig } from '../../apps/api/src/config';
import { type AppOptions, createApp } from '../../apps/api/src/create-app';
import { testDatabaseUrl } from './test-database';
import { TEST_ADMIN_TOKEN, UNLIMITED_RATE } from './test-env';
import { TEST_SECRETS_KEY } from './test-secrets';

export { TEST_ADMIN_TOKEN, UNLIMITED_RATE } from './test-env';

export interface TestApp {
  app: NestExpressApplication;
  baseUrl: string;
  http: ReturnType<typeof request>;
  /** Creates a fresh company through the admin API: tests never share a tenant. */
  newCompany(
    overrides?: Partial<{ name: string; countryCode: string; currency: string; profile: object }>,
  ): Promise<TestCompany>;
  close(): Promise<void>;
}

export interface TestCompany {
  companyId: string;
  apiKey: string;
  auth: { Authorization: string };
}

/**
 * The real application (same module, pipes, filter, body parser as production) on the test
 * database, listening on an ephemeral port. `env` overrides configuration variables; `options`
 * extends the application (`createApp`).
 * One app at a time per test file: @nestjs-cls/transactional keeps a process-wide
 * TransactionHost, so a second live app in the same process would take over the first one's
 * transactions. Close one before starting another (production runs one app per process).
 */
export async function startTestApp(
  env: Record<string, string> = {},
  options: AppOptions = {},
): Promise<TestApp> {
  const config = loadConfig({
    DATABASE_URL: testDatabaseUrl(),
    ADMIN_API_TOKEN: TEST_ADMIN_TOKEN,
    LOG_LEVEL: 'error',
    DATABASE_POOL_SIZE: '10',
    SECRETS_KEY: TEST_SECRETS_KEY,
    // Suites fire bursts at one company from one address: only the rate-limit suites set a limit.
    RATE_LIMIT_PER_SECOND: UNLIMITED_RATE,
    RATE_LIMIT_UNVERIFIED_PER_SECOND: UNLIMITED_RATE,
    ...env,
  });
  const app = await createApp(
    config,
    { url: config.database.url ?? testDatabaseUrl(), embedded: undefined },
    options,
  );
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  const baseUrl = `http://127.0.0.1:${port}`;
  const http = request(baseUrl);
  return {
    app,
    baseUrl,
    http,
    async newCompany(overrides = {}) {
      const response = await http
        .post('/admin/companies')
        .set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
        .set('Idempotency-Key', `test-company-${randomUUID()}`)
        .send({ name: 'Test Company', countryCode: 'LT', currency: 'EUR', ...overrides });
      if (response.status !== 201)
        throw new Error(`company creation failed: ${response.status} ${response.text}`);
      const { companyId, apiKey } = response.body as { companyId: string; apiKey: string };
      return { companyId, apiKey, auth: { Authorization: `Bearer ${apiKey}` } };
    },
    close: () => app.close(),
  };
}
