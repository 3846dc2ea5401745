import type { Pool } from 'pg';
import type { RunningProviderSandbox } from '@ledgerkey/payments';
import { paymentEnv } from './payment-books';
import { SandboxHttp, startTestSandbox, stopAllSandboxes } from './provider-sandbox';
import { startTestApp, type TestApp } from './test-app';
import { testDatabasePool } from './test-database';

/** A provider sandbox process, the application paying through it, and a pool on the test database. */
export interface SandboxApp {
  sandbox: RunningProviderSandbox;
  provider: SandboxHttp;
  api: TestApp;
  db: Pool;
}

/** Starts a {@link SandboxApp}: the application gets {@link paymentEnv} and `env` of the sandbox. */
export async function startSandboxApp(
  env: (sandbox: RunningProviderSandbox) => Record<string, string> = () => ({}),
): Promise<SandboxApp> {
  const sandbox = await startTestSandbox();
  const provider = new SandboxHttp(sandbox);
  const api = await startTestApp({ ...paymentEnv(sandbox), ...env(sandbox) });
  return { sandbox, provider, api, db: testDatabasePool() };
}

/** Closes what {@link startSandboxApp} started (any part of it, if it failed midway). */
export async function stopSandboxApp(started: Partial<SandboxApp>): Promise<void> {
  await started.api?.close();
  await started.db?.end();
  await stopAllSandboxes();
}
