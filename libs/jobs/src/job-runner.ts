import { type BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { closing, isConnectionLoss } from '@ledgerkey/database';
import { Logger as GraphileLogger, parseCrontab, run, type Runner, type TaskList } from 'graphile-worker';
import { Pool } from 'pg';
import { JobRegistry, type JobRegistration, type WorkerService } from './job-registry';
import type { JobPayload } from './job-tasks';

export interface JobRunnerOptions {
  /** The job queue's database (the application database: jobs are enqueued in its transactions). */
  connectionString: string;
  /** WORKER_CONCURRENCY: jobs this process runs at once. */
  concurrency: number;
}

/** Jobs scheduled in the future (retries) are found by polling at this interval; new jobs arrive by LISTEN/NOTIFY. */
const POLL_INTERVAL_MS = 1000;

/** A task every worker also runs itself (`inEveryWorker`): one run at a time per process. */
class InProcessRun {
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly registration: JobRegistration,
    private readonly logger: Logger,
  ) {}

  /** Starts a run, or joins the one in progress; never rejects (a failure is logged). */
  run(): Promise<void> {
    this.running ??= this.registration
      .run({})
      .catch((error: unknown) =>
        this.logger.error(
          `${this.registration.task.name} failed`,
          error instanceof Error ? error.stack : error,
        ),
      )
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  repeat(intervalMs: number): void {
    this.timer = setInterval(() => void this.run(), intervalMs);
    this.timer.unref();
  }

  /** Stops repeating; resolves when the run in progress (if any) ended. */
  stop(): Promise<void> {
    clearInterval(this.timer);
    return this.running ?? Promise.resolve();
  }
}

/**
 * The graphile-worker runner of this process. Runs the tasks registered in the `JobRegistry` and
 * their crontab schedules; tasks registered `inEveryWorker` also run at start (before the first
 * job is taken) and on their interval; registered worker services start after the queue. Stops
 * before the database pool closes (beforeApplicationShutdown runs before any
 * onApplicationShutdown), letting running jobs and the services' work in progress finish.
 * Idle until `start`: the API process starts it only with RUN_WORKER.
 */
@Injectable()
export class JobRunner implements BeforeApplicationShutdown {
  private readonly logger = new Logger('JobRunner');
  private runner: Runner | undefined;
  /** The queue's own pool, closed by us after the runner stopped (before the database may go away). */
  private pool: { close(): Promise<void> } | undefined;
  private inProcessRuns: InProcessRun[] = [];
  private services: WorkerService[] = [];
  private stopping: Promise<void> | undefined;

  constructor(private readonly registry: JobRegistry) {}

  /** @throws Error when already started, or when the queue cannot be reached */
  async start(options: JobRunnerOptions): Promise<void> {
    if (this.runner) throw new Error('the job runner is already running');
    const registrations = this.registry.all();
    const inProcess = new Map<string, InProcessRun>();
    for (const registration of registrations) {
      if (registration.inEveryWorker) {
        inProcess.set(registration.task.name, new InProcessRun(registration, this.logger));
      }
    }
    this.inProcessRuns = [...inProcess.values()];
    await Promise.all(this.inProcessRuns.map((routine) => routine.run()));
    process.on('unhandledRejection', this.survivesDatabaseRestart);
    const pgPool = new Pool({
      connectionString: options.connectionString,
      max: options.concurrency + 2,
      application_name: 'ledgerkey-jobs',
    });
    this.pool = closing(pgPool);
    // An idle client losing its connection (database restart) must not crash the process.
    const connectionLost = (error: Error): void =>
      this.logger.warn(`job queue connection lost: ${error.message}`);
    pgPool.on('error', connectionLost);
    pgPool.on('connect', (client) => client.on('error', connectionLost));
    this.runner = await run({
      pgPool,
      concurrency: options.concurrency,
      pollInterval: POLL_INTERVAL_MS,
      noHandleSignals: true,
      logger: new GraphileLogger(() => (level, message) => this.log(level, message)),
      taskList: taskListOf(registrations, inProcess),
      // Parsed here, also when empty: without cron items graphile-worker would read ./crontab.
      parsedCronItems: parseCrontab(
        registrations
          .filter((registration) => registration.schedule !== undefined)
          .map((registration) => `${registration.schedule} ${registration.task.name}\n`)
          .join(''),
      ),
    });
    for (const registration of registrations) {
      if (registration.inEveryWorker) {
        inProcess.get(registration.task.name)?.repeat(registration.inEveryWorker.intervalMs);
      }
    }
    this.services = this.registry.services();
    await Promise.all(this.services.map((service) => service.start(options)));
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.stop();
  }

  /**
   * Stops taking jobs, lets running ones finish, then ends the queue's pool. Idempotent: a second
   * call returns the first one's promise. It waits as long as the running jobs (a webhook
   * delivery: up to WEBHOOK_TIMEOUT_MS) and the database take; the process's stop bounds it.
   */
  stop(): Promise<void> {
    this.stopping ??= this.stopRunner();
    return this.stopping;
  }

  private async stopRunner(): Promise<void> {
    const runner = this.runner;
    const pool = this.pool;
    this.runner = undefined;
    this.pool = undefined;
    const services = this.services;
    this.services = [];
    await Promise.all([
      ...this.inProcessRuns.map((routine) => routine.stop()),
      ...services.map((service) => service.stop()),
      runner?.stop(),
    ]);
    // Every connection closed, not only taken out of the pool: the database may stop next.
    await pool?.close();
    process.off('unhandledRejection', this.survivesDatabaseRestart);
  }

  /**
   * graphile-worker 0.18 releases a finished job (`completeJob` / `failJob` in its worker.js)
   * without awaiting the promise: when the database is unreachable at that moment (a restart),
   * the rejection is unhandled and Node would end the process. The job then stays locked, and the
   * lease sweep or the next run takes its work again (expired delivery leases), as for a dead
   * worker. Any other unhandled rejection still ends the process, unless it is stopping anyway.
   */
  private readonly survivesDatabaseRestart = (reason: unknown): void => {
    // While stopping, whatever the database does (e.g. it was dropped) must not crash the stop.
    if (!isConnectionLoss(reason) && this.stopping === undefined) throw reason;
    const message = reason instanceof Error ? reason.message : String(reason);
    this.logger.warn(`job queue could not release a job, the database is unreachable: ${message}`);
  };

  private log(level: string, message: string): void {
    if (level === 'error') this.logger.error(message);
    else if (level === 'warning') this.logger.warn(message);
    // graphile-worker reports every job at "info": that is debug detail for us.
    else this.logger.debug(message);
  }
}

/** A queued job of an `inEveryWorker` task joins the process's run in progress. */
function taskListOf(registrations: JobRegistration[], inProcess: Map<string, InProcessRun>): TaskList {
  const tasks: TaskList = {};
  for (const registration of registrations) {
    const routine = inProcess.get(registration.task.name);
    tasks[registration.task.name] = routine
      ? () => routine.run()
      : (payload) => registration.run(payloadOf(registration, payload));
  }
  return tasks;
}

/**
 * The payload's fields, each checked to be a string; an optional field may be missing (or null).
 * @throws Error naming the field otherwise (the queue retries the job, then keeps it as failed)
 */
function payloadOf(registration: JobRegistration, payload: unknown): JobPayload {
  const { payloadFields, optionalFields } = registration.task;
  const fields: JobPayload = {};
  for (const field of payloadFields) {
    const value = (payload as Record<string, unknown> | null)?.[field];
    if (typeof value === 'string') fields[field] = value;
    else if (value !== undefined && value !== null) {
      throw new Error(`job payload has a malformed ${field}: ${JSON.stringify(payload)}`);
    } else if (!optionalFields.includes(field)) {
      throw new Error(`job payload has no ${field}: ${JSON.stringify(payload)}`);
    }
  }
  return fields;
}
