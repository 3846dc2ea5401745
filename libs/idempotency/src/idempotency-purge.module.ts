import { Inject, Injectable, Logger, Module, type OnModuleInit, Optional } from '@nestjs/common';
import { DatabasePool } from '@ledgerkey/database';
import { JobRegistry, JobsModule, JobTasks } from '@ledgerkey/jobs';
import { IDEMPOTENCY_OBSERVER, type IdempotencyObserver } from './idempotency.observer';
import { purgeExpiredIdempotencyRecords } from './purge-expired-idempotency-records';

/** Registers the purge of expired idempotency keys with the job queue: every five minutes, queue-wide. */
@Injectable()
class IdempotencyPurgeJob implements OnModuleInit {
  private readonly logger = new Logger('IdempotencyPurge');

  constructor(
    private readonly registry: JobRegistry,
    private readonly pool: DatabasePool,
    // Present where the API runs in the same process (npm start); the standalone worker has none.
    @Optional() @Inject(IDEMPOTENCY_OBSERVER) private readonly observer?: IdempotencyObserver,
  ) {}

  onModuleInit(): void {
    this.registry.register({
      task: JobTasks.PurgeIdempotencyKeys,
      schedule: '*/5 * * * *',
      run: async () => {
        const purged = await purgeExpiredIdempotencyRecords(this.pool);
        this.observer?.purged(purged);
        if (purged > 0) this.logger.log(`purged ${purged} expired idempotency keys`);
      },
    });
  }
}

/**
 * The idempotency lib's job: the purge. Imported by every process that runs a job runner (the
 * API with RUN_WORKER, the standalone worker); needs the DatabasePool (DatabaseModule).
 */
@Module({ imports: [JobsModule], providers: [IdempotencyPurgeJob] })
export class IdempotencyPurgeModule {}
