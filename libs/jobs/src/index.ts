export { JobTasks } from './job-tasks';
export type { JobPayload, JobTask } from './job-tasks';
export {
  enqueueJobSql,
  idOfJobKeySql,
  isJobOfTaskSql,
  jobKeyOf,
  jobKeySql,
  QUEUED_JOBS,
} from './job-queue-sql';
export type { EnqueueOptions, SqlExpression } from './job-queue-sql';
export { installJobQueue } from './job-queue';
export { JobRegistry } from './job-registry';
export type { JobRegistration, WorkerService } from './job-registry';
export { JobRunner } from './job-runner';
export type { JobRunnerOptions } from './job-runner';
export { JobsModule } from './jobs.module';
export { parseJobsConfig } from './jobs-config';
export type { JobsConfig } from './jobs-config';
