import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningProviderSandbox } from '@ledgerkey/payments';
import type { ApiProcess } from './api-process';
import type { ChaosDatabase } from './chaos-database';
import type { ChaosTimeline, FaultKind } from './chaos-timeline';
import { paymentEnv } from './payment-books';
import { TEST_SECRETS_KEY } from './test-secrets';
import type { WorkerProcess } from './worker-process';

/** Webhooks of a chaos run: to the local receiver, retried and swept within seconds. */
const WEBHOOK_ENV = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '1,1,1,2,2,5',
  WEBHOOK_TIMEOUT_MS: '2000',
  WEBHOOK_LEASE_SECONDS: '3',
  WEBHOOK_SWEEP_INTERVAL_MS: '500',
};

/** The settings of every API and worker process of a chaos run. */
export function chaosProcessEnv(
  database: ChaosDatabase,
  sandbox: RunningProviderSandbox,
): Record<string, string> {
  return {
    DATABASE_URL: database.url,
    RUN_WORKER: 'false',
    LOG_LEVEL: 'warn',
    // Every API and worker process seals and opens webhook secrets with this one key.
    SECRETS_KEY: TEST_SECRETS_KEY,
    ...WEBHOOK_ENV,
    // One URL for the whole run: the sandbox restarts on the same port and data dir.
    ...paymentEnv(sandbox),
    // Client retries count too; the recovery must outlast the sandbox's down time and the fault mix.
    PAYMENT_RECOVERY_MAX_ATTEMPTS: '50',
  };
}

/** A process the chaos suite kills: an API, the worker or the provider sandbox. */
export interface Killable {
  readonly pid: number;
  kill(signal: NodeJS.Signals): Promise<unknown>;
  output(): string;
}

/** Kills processes as faults on the timeline, and keeps what they printed and how often each kind restarted. */
export class ProcessKiller {
  readonly restarts = { api: 0, worker: 0, sandbox: 0 };
  /** Output of processes that were killed, for failure messages. */
  readonly deadOutput: string[] = [];

  constructor(private readonly timeline: ChaosTimeline) {}

  /**
   * SIGKILLs `victim` (`target` on the timeline) and after `downMs` without it starts the next
   * one with `restart`: then the fault has recovered.
   */
  async kill(
    kind: Exclude<FaultKind, 'postgres_restart'>,
    target: string,
    victim: Killable,
    restart: () => Promise<unknown>,
    downMs = 0,
  ): Promise<void> {
    const fault = this.timeline.begin(kind, target);
    expect(await victim.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    this.deadOutput.push(`--- ${target} (pid ${victim.pid}) ---\n${victim.output()}`);
    if (downMs > 0) await sleep(downMs);
    await restart();
    this.restarts[kind === 'api_kill' ? 'api' : kind === 'worker_kill' ? 'worker' : 'sandbox'] += 1;
    this.timeline.recovered(fault);
  }
}

/**
 * Stops and starts PostgreSQL under the running processes, which must recover on their own:
 * the same API processes answer ready again, and the same worker keeps running.
 */
export async function restartPostgres(
  timeline: ChaosTimeline,
  database: ChaosDatabase,
  apis: ApiProcess[],
  worker: WorkerProcess,
  downMs: number,
): Promise<void> {
  const survivors: Array<ApiProcess | WorkerProcess> = [...apis, worker];
  const fault = timeline.begin('postgres_restart', 'postgres');
  await database.stop();
  await sleep(downMs);
  await database.start();
  await Promise.all(apis.map((api) => untilReady(api)));
  timeline.recovered(fault);
  expect(survivors.map((survivor) => survivor.running)).toEqual(survivors.map(() => true));
}

export async function untilReady(api: ApiProcess): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const status = await fetch(`${api.baseUrl}/health/ready`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return;
    if (Date.now() > deadline) throw new Error(`${api.baseUrl} not ready 20 s after the database restart`);
    await sleep(100);
  }
}
