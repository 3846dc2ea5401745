import { type BeforeApplicationShutdown, Inject, Injectable, Logger, Optional } from '@nestjs/common';
import {
  IDEMPOTENCY_OBSERVER,
  type IdempotencyObserver,
  PURGE_IDEMPOTENCY_KEYS_TASK,
  purgeExpiredIdempotencyRecords,
} from '@ledgerkey/idempotency';
import { isConnectionLoss } from '@ledgerkey/database';
import { Task } from '@ledgerkey/outbox';
import {
  DeliverWebhookHandler,
  FanOutEventHandler,
  SweepWebhookLeasesHandler,
  WebhookTask,
} from '@ledgerkey/webhooks';
import { Logger as GraphileLogger, run, type Runner, type TaskList } from 'graphile-worker';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';

export interface JobRunnerOptions {
  /** The job queue's database (the application database: jobs are enqueued in its transactions). */
  connectionString: string;
  /** Jobs this process runs at once. */
  concurrency: number;
  /** In-process lease sweep, on top of the queue-wide crontab sweep every minute. */
  sweepIntervalMs: number;
}

/** Jobs scheduled in the future (retries) are found by polling at this interval; new jobs arrive by LISTEN/NOTIFY. */
const POLL_INTERVAL_MS = 1000;

/**
 * The graphile-worker runner of this process: the outbox's fan-out jobs, webhook deliveries,
 * the purge of expired idempotency keys (crontab, every five minutes), and the lease sweeper (at start, every minute by crontab across all workers, and on a short
 * in-process interval). Stops before the database pool closes (beforeApplicationShutdown runs
 * before any onApplicationShutdown), letting running jobs finish.
 */
@Injectable()
export class JobRunner implements BeforeApplicationShutdown {
  private readonly logger = new Logger('JobRunner');
  private runner: Runner | undefined;
  /** The queue's own pool, ended by us after the runner stopped (before the database may go away). */
  private pool: Pool | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly fanOut: FanOutEventHandler,
    private readonly deliver: DeliverWebhookHandler,
    private readonly sweeper: SweepWebhookLeasesHandler,
    private readonly dataSource: DataSource,
    // Present where the API runs in the same process (npm start); the standalone worker has none.
    @Optional() @Inject(IDEMPOTENCY_OBSERVER) private readonly idempotencyObserver?: IdempotencyObserver,
  ) {}

  /** @throws Error when already started, or when the queue cannot be reached */
  async start(options: JobRunnerOptions): Promise<void> {
    if (this.runner) throw new Error('the job runner is already running');
    await this.sweep();
    process.on('unhandledRejection', this.survivesDatabaseRestart);
    this.pool = new Pool({
      connectionString: options.connectionString,
      max: options.concurrency + 2,
      application_name: 'ledgerkey-jobs',
    });
    // An idle client losing its connection (database restart) must not crash the process.
    const connectionLost = (error: Error): void =>
      this.logger.warn(`job queue connection lost: ${error.message}`);
    this.pool.on('error', connectionLost);
    this.pool.on('connect', (client) => client.on('error', connectionLost));
    this.runner = await run({
      pgPool: this.pool,
      concurrency: options.concurrency,
      pollInterval: POLL_INTERVAL_MS,
      noHandleSignals: true,
      logger: new GraphileLogger(() => (level, message) => this.log(level, message)),
      taskList: this.tasks(),
      // Every minute: lease sweep. Every five minutes: purge of expired idempotency keys.
      crontab: `* * * * * ${WebhookTask.SweepWebhookLeases}\n*/5 * * * * ${PURGE_IDEMPOTENCY_KEYS_TASK}\n`,
    });
    this.sweepTimer = setInterval(() => void this.sweep(), options.sweepIntervalMs);
    this.sweepTimer.unref();
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
    clearInterval(this.sweepTimer);
    const runner = this.runner;
    const pool = this.pool;
    this.runner = undefined;
    this.pool = undefined;
    await Promise.all([this.sweeping, runner?.stop()]);
    await pool?.end();
    process.off('unhandledRejection', this.survivesDatabaseRestart);
  }

  /**
   * graphile-worker 0.18 releases a finished job (`completeJob` / `failJob` in its worker.js)
   * without awaiting the promise: when the database is unreachable at that moment (a restart),
   * the rejection is unhandled and Node would end the process. The job then stays locked, and the
   * lease sweep queues its work again (expired delivery leases, stale fan-outs), as for a dead
   * worker. Any other unhandled rejection still ends the process, unless it is stopping anyway.
   */
  private readonly survivesDatabaseRestart = (reason: unknown): void => {
    // While stopping, whatever the database does (e.g. it was dropped) must not crash the stop.
    if (!isConnectionLoss(reason) && this.stopping === undefined) throw reason;
    const message = reason instanceof Error ? reason.message : String(reason);
    this.logger.warn(`job queue could not release a job, the database is unreachable: ${message}`);
  };

  private tasks(): TaskList {
    return {
      [Task.FanOutEvent]: async (payload) => {
        await this.fanOut.execute(optionalIdOf(payload, 'companyId'), idOf(payload, 'eventId'));
      },
      [WebhookTask.DeliverWebhook]: async (payload) => {
        await this.deliver.execute(optionalIdOf(payload, 'companyId'), idOf(payload, 'deliveryId'));
      },
      [WebhookTask.SweepWebhookLeases]: async () => {
        await this.sweep();
      },
      [PURGE_IDEMPOTENCY_KEYS_TASK]: async () => {
        const purged = await purgeExpiredIdempotencyRecords(this.dataSource);
        this.idempotencyObserver?.purged(purged);
        if (purged > 0) this.logger.log(`purged ${purged} expired idempotency keys`);
      },
    };
  }

  /** One sweep at a time per process; a failed sweep is logged and retried at the next tick. */
  private sweep(): Promise<void> {
    this.sweeping ??= this.sweeper
      .execute()
      .then((result) => {
        if (result.abandoned + result.requeued + result.fanOutsRequeued > 0) {
          this.logger.warn(`lease sweep recovered work of stopped workers: ${JSON.stringify(result)}`);
        }
      })
      .catch((error: unknown) =>
        this.logger.error('lease sweep failed', error instanceof Error ? error.stack : error),
      )
      .finally(() => {
        this.sweeping = undefined;
      });
    return this.sweeping;
  }

  private log(level: string, message: string): void {
    if (level === 'error') this.logger.error(message);
    else if (level === 'warning') this.logger.warn(message);
    // graphile-worker reports every job at "info": that is debug detail for us.
    else this.logger.debug(message);
  }
}

function idOf(payload: unknown, field: string): string {
  const value = optionalIdOf(payload, field);
  if (value === undefined) throw new Error(`job payload has no ${field}: ${JSON.stringify(payload)}`);
  return value;
}

/** Jobs queued before their payload named the company (TenantKeys1765500000000) have no companyId. */
function optionalIdOf(payload: unknown, field: string): string | undefined {
  const value = (payload as Record<string, unknown> | null)?.[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string')
    throw new Error(`job payload has a malformed ${field}: ${JSON.stringify(payload)}`);
  return value;
}
