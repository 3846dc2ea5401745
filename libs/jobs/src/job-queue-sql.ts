import type { JobPayload, JobTask } from './job-tasks';

/**
 * SQL text that the caller's statement evaluates: a column (`event.id`), a parameter (`$2`), an
 * expression. Built from constants of the calling repository, never from input.
 */
export type SqlExpression = string;

export interface EnqueueOptions {
  /** When the job may run first (a `timestamptz` expression); default: at once. */
  runAt?: SqlExpression;
  /**
   * graphile-worker's `job_key_mode` for a keyed task, when a job with the key is already
   * queued: `replace` (its default) replaces payload and run_at, and makes a new job when the
   * queued one is locked by a worker; `preserve_run_at` keeps the queued job's run_at.
   */
  jobKeyMode?: 'replace' | 'preserve_run_at';
}

/** The queue's table of jobs, for reads (a job exists until it succeeded or was removed). */
export const QUEUED_JOBS = 'graphile_worker.jobs';

/**
 * An expression that enqueues one job of `task` (graphile-worker's `add_job`), to be placed in
 * the caller's own statement: the job commits or rolls back with that statement's transaction,
 * so a row and the job that works on it exist together or not at all. A keyed task gets its job
 * key from the payload's key field. The expression's value is the job row
 * (`(<expression>).id` is the job id).
 * @param payload a SQL expression per payload field, e.g. `{ eventId: 'event.id' }`; an optional
 *   field may be left out
 * @throws Error when a required payload field is missing, or `jobKeyMode` is given for an
 *   unkeyed task
 */
export function enqueueJobSql<Payload extends JobPayload>(
  task: JobTask<Payload>,
  payload: { [Field in keyof Payload]: SqlExpression },
  options: EnqueueOptions = {},
): string {
  const given = payload as Record<string, SqlExpression | undefined>;
  const fields: string[] = [];
  for (const field of task.payloadFields) {
    const expression = given[field];
    if (expression !== undefined) fields.push(`'${field}', ${expression}`);
    else if (!task.optionalFields.includes(field)) {
      throw new Error(`job task ${task.name}: payload field ${field} is missing`);
    }
  }
  const args = [`'${task.name}'`, `json_build_object(${fields.join(', ')})`];
  if (options.runAt !== undefined) args.push(`run_at := ${options.runAt}`);
  if (task.key !== undefined) args.push(`job_key := ${jobKeySql(task, given[task.key.field] as string)}`);
  if (options.jobKeyMode !== undefined) {
    if (task.key === undefined) throw new Error(`job task ${task.name} has no job key`);
    args.push(`job_key_mode := '${options.jobKeyMode}'`);
  }
  return `graphile_worker.add_job(${args.join(', ')})`;
}

/** The job key of `task` for the id `idExpression` evaluates to: `'<prefix>:' || <id>`. */
export function jobKeySql(task: JobTask, idExpression: SqlExpression): string {
  return `'${keyOf(task).prefix}:' || ${idExpression}`;
}

/**
 * A condition: the job `jobAlias` (a row of {@link QUEUED_JOBS}) is a keyed job of `task`.
 * Matches the task's name and key prefix, so a job of the task enqueued without a key is not
 * taken for one.
 */
export function isJobOfTaskSql(task: JobTask, jobAlias: string): string {
  const prefix = keyOf(task).prefix.replace(/[\\%_]/g, '\\$&');
  return `${jobAlias}.task_identifier = '${task.name}' AND ${jobAlias}.key LIKE '${prefix}:%'`;
}

/** The id in the key of the job `jobAlias` (text): the key without `<prefix>:`. */
export function idOfJobKeySql(task: JobTask, jobAlias: string): string {
  return `substr(${jobAlias}.key, ${keyOf(task).prefix.length + 2})`;
}

/** The job key of `task` for `id`, as `jobKeySql` builds it in SQL. */
export function jobKeyOf(task: JobTask, id: string): string {
  return `${keyOf(task).prefix}:${id}`;
}

function keyOf(task: JobTask): { prefix: string; field: string } {
  if (task.key === undefined) throw new Error(`job task ${task.name} has no job key`);
  return task.key;
}
