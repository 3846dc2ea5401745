import { type Env, EnvReader, type ParsedConfig } from '@ledgerkey/process';

/** How a process runs jobs (with `JobRunner.start`). */
export interface JobsConfig {
  /** WORKER_CONCURRENCY: jobs one process runs at once. */
  concurrency: number;
}

export function parseJobsConfig(env: Env): ParsedConfig<JobsConfig> {
  const reader = new EnvReader(env);
  return reader.parsed({ concurrency: reader.integer('WORKER_CONCURRENCY', 5, 1, 100) });
}
