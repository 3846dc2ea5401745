import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { Pool } from 'pg';
import { createIsolatedDatabase, type IsolatedDatabase } from '../../../test/support/isolated-database';
import { enqueueJobSql, QUEUED_JOBS } from './job-queue-sql';
import { JobRegistry } from './job-registry';
import { JobRunner } from './job-runner';
import { JobTasks } from './job-tasks';

/** Resolves when `condition` holds, polling; rejects after `timeoutMs`. */
async function eventually(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('JobRunner with the JobRegistry (graphile-worker on PostgreSQL)', () => {
  // A database of its own with only the queue's schema: no other suite's runner takes these jobs.
  let database: IsolatedDatabase;
  let db: Pool;
  let runner: JobRunner | undefined;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    database = await createIsolatedDatabase('jobs_runner', { migrations: [] });
    db = new Pool({ connectionString: database.url, max: 2 });
  });
  afterEach(async () => {
    await runner?.stop();
    runner = undefined;
    await db.query(`DELETE FROM graphile_worker._private_jobs`);
  });
  afterAll(async () => {
    await db.end();
    await database.drop();
  });

  async function enqueueFanOut(eventId: string, outcome: 'COMMIT' | 'ROLLBACK'): Promise<void> {
    const client = await db.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SELECT ${enqueueJobSql(JobTasks.FanOutEvent, { eventId: '$1::text' })}`, [eventId]);
      await client.query(outcome);
    } finally {
      client.release();
    }
  }

  async function queuedKeys(): Promise<string[]> {
    const { rows } = await db.query<{ key: string }>(`SELECT key FROM ${QUEUED_JOBS} ORDER BY key`);
    return rows.map((row) => row.key);
  }

  it('runs a registered task with its payload; a job enqueued in a rolled-back transaction does not exist', async () => {
    const committed = randomUUID();
    await enqueueFanOut(committed, 'COMMIT');
    await enqueueFanOut(randomUUID(), 'ROLLBACK');
    // The key makes a second enqueue of the same event replace the queued job, not add one.
    await enqueueFanOut(committed, 'COMMIT');
    expect(await queuedKeys()).toEqual([`fan_out:${committed}`]);

    const ran: Array<{ eventId: string }> = [];
    const registry = new JobRegistry();
    registry.register({ task: JobTasks.FanOutEvent, run: async (payload) => void ran.push(payload) });
    runner = new JobRunner(registry);
    await runner.start({ connectionString: database.url, concurrency: 2 });

    await eventually(async () => (await queuedKeys()).length === 0);
    expect(ran).toEqual([{ eventId: committed }]);
  });

  it('passes a payload without its optional fields; refuses one without a required field or with a malformed one', async () => {
    const legacy = randomUUID();
    await db.query(
      `SELECT graphile_worker.add_job('fan_out_event', json_build_object('eventId', $1::text))`,
      [legacy],
    );
    await db.query(`SELECT graphile_worker.add_job('fan_out_event', json_build_object('other', 1))`);
    await db.query(
      `SELECT graphile_worker.add_job('fan_out_event', json_build_object('companyId', 7, 'eventId', 'e'))`,
    );
    const ran: unknown[] = [];
    const registry = new JobRegistry();
    registry.register({ task: JobTasks.FanOutEvent, run: async (payload) => void ran.push(payload) });
    runner = new JobRunner(registry);
    await runner.start({ connectionString: database.url, concurrency: 1 });

    const errors = async (): Promise<string[]> => {
      const { rows } = await db.query<{ last_error: string | null }>(
        `SELECT last_error FROM ${QUEUED_JOBS} WHERE last_error IS NOT NULL ORDER BY last_error`,
      );
      return rows.map((row) => row.last_error as string);
    };
    await eventually(async () => (await errors()).length === 2 && ran.length === 1);
    expect(await errors()).toEqual([
      expect.stringMatching(/^job payload has a malformed companyId/),
      expect.stringMatching(/^job payload has no eventId/),
    ]);
    expect(ran).toEqual([{ eventId: legacy }]);
  });

  it('runs an in-every-worker task at start, before taking jobs, once at a time; stop waits for it', async () => {
    let runs = 0;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const registry = new JobRegistry();
    registry.register({
      task: JobTasks.SweepWebhookLeases,
      run: async () => {
        runs += 1;
        if (runs === 2) await released;
      },
      inEveryWorker: { intervalMs: 20 },
    });
    runner = new JobRunner(registry);
    await runner.start({ connectionString: database.url, concurrency: 1 });
    expect(runs).toBeGreaterThanOrEqual(1);
    // The second run hangs until released: the interval keeps joining it instead of starting more.
    await eventually(() => runs === 2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(runs).toBe(2);

    let stopped = false;
    const stopping = runner.stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(runs).toBe(2);
  });

  it('gives the queue the crontab schedules of the registered tasks', async () => {
    const registry = new JobRegistry();
    registry.register({
      task: JobTasks.PurgeIdempotencyKeys,
      run: async () => undefined,
      schedule: '*/5 * * * *',
    });
    runner = new JobRunner(registry);
    await runner.start({ connectionString: database.url, concurrency: 1 });
    // graphile-worker records every crontab identifier it schedules.
    await eventually(async () => {
      const { rows } = await db.query<{ identifier: string }>(
        `SELECT identifier FROM graphile_worker._private_known_crontabs`,
      );
      return rows.some((row) => row.identifier === 'purge_idempotency_keys');
    });
  });

  it('starts registered worker services with the runner, after the queue, and stops them with it', async () => {
    const calls: string[] = [];
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const registry = new JobRegistry();
    registry.registerService({
      name: 'dispatcher',
      start: async (options) => void calls.push(`start ${options.concurrency}`),
      stop: async () => {
        calls.push('stopping');
        await finished;
        calls.push('stopped');
      },
    });
    expect(() =>
      registry.registerService({ name: 'dispatcher', start: async () => {}, stop: async () => {} }),
    ).toThrow(/registered twice/);
    runner = new JobRunner(registry);
    await runner.start({ connectionString: database.url, concurrency: 3 });
    expect(calls).toEqual(['start 3']);
    // The runner's stop waits for the service's work in progress.
    let stopped = false;
    const stopping = runner.stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stopped).toBe(false);
    finish();
    await stopping;
    expect(calls).toEqual(['start 3', 'stopping', 'stopped']);
  });

  it('refuses to register a task twice', () => {
    const registry = new JobRegistry();
    registry.register({ task: JobTasks.PurgeIdempotencyKeys, run: async () => undefined });
    expect(() =>
      registry.register({ task: JobTasks.PurgeIdempotencyKeys, run: async () => undefined }),
    ).toThrow(/registered twice/);
  });
});
