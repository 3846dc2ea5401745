import { Injectable } from '@nestjs/common';
import type { JobPayload, JobTask } from './job-tasks';

/** What runs a task, registered by the lib that owns the task. */
export interface JobRegistration<Payload extends JobPayload = JobPayload> {
  task: JobTask<Payload>;
  /**
   * Runs one job with its payload (every field of the task checked to be a string). Throwing
   * leaves the job to the queue's own retry with backoff.
   */
  run(payload: Payload): Promise<void>;
  /** A crontab schedule (five fields, e.g. `*\/5 * * * *`): the queue runs the task once queue-wide. */
  schedule?: string;
  /**
   * Also run by every worker process itself: once when it starts (before it takes jobs), then
   * every `intervalMs`. One run at a time per process: a run requested while one is in progress
   * (by the interval or by a queued job) joins it; a failed run is logged, and the next tick
   * tries again.
   */
  inEveryWorker?: { intervalMs: number };
}

/**
 * A long-running part of a worker that is not a queued task (the webhook dispatcher, which takes
 * due deliveries from its own table): started with the job runner, after the queue, and stopped
 * with it, in parallel with the queue's running jobs.
 */
export interface WorkerService {
  readonly name: string;
  /** Starts the service's own loop; resolves once it runs. */
  start(options: { connectionString: string; concurrency: number }): Promise<void>;
  /** Stops taking work and resolves when the work in progress has ended. */
  stop(): Promise<void>;
}

/**
 * The tasks this process can run. Each lib's module registers its own tasks when the
 * application initializes (before the runner may start); the runner knows them only from here.
 */
@Injectable()
export class JobRegistry {
  private readonly registrations = new Map<string, JobRegistration>();
  private readonly workerServices = new Map<string, WorkerService>();

  /** @throws Error when the task is already registered */
  register<Payload extends JobPayload>(registration: JobRegistration<Payload>): void {
    const { name } = registration.task;
    if (this.registrations.has(name)) throw new Error(`job task ${name} is registered twice`);
    this.registrations.set(name, registration as unknown as JobRegistration);
  }

  all(): JobRegistration[] {
    return [...this.registrations.values()];
  }

  /** @throws Error when a service of that name is already registered */
  registerService(service: WorkerService): void {
    if (this.workerServices.has(service.name))
      throw new Error(`worker service ${service.name} is registered twice`);
    this.workerServices.set(service.name, service);
  }

  services(): WorkerService[] {
    return [...this.workerServices.values()];
  }
}
