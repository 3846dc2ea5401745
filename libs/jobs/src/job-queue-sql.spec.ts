import { enqueueJobSql, idOfJobKeySql, isJobOfTaskSql, jobKeyOf, jobKeySql } from './job-queue-sql';
import { JobTasks } from './job-tasks';

describe('enqueueJobSql', () => {
  it('calls add_job with the task, the payload and the key made from the key field', () => {
    expect(enqueueJobSql(JobTasks.FanOutEvent, { companyId: '$2::uuid', eventId: 'event.id' })).toBe(
      `graphile_worker.add_job('fan_out_event', json_build_object('companyId', $2::uuid, 'eventId', event.id), ` +
        `job_key := 'fan_out:' || event.id)`,
    );
    // An optional field may be left out (a fan-out rebuilt from its key names no company).
    expect(enqueueJobSql(JobTasks.FanOutEvent, { eventId: 'x' })).toBe(
      `graphile_worker.add_job('fan_out_event', json_build_object('eventId', x), job_key := 'fan_out:' || x)`,
    );
  });

  it('adds run_at and job_key_mode when given', () => {
    expect(
      enqueueJobSql(
        JobTasks.DeliverWebhook,
        { companyId: 'd.company_id', deliveryId: 'd.id' },
        { runAt: 'd.next_attempt_at', jobKeyMode: 'replace' },
      ),
    ).toBe(
      `graphile_worker.add_job('deliver_webhook', json_build_object('companyId', d.company_id, 'deliveryId', d.id), ` +
        `run_at := d.next_attempt_at, job_key := 'deliver:' || d.id, job_key_mode := 'replace')`,
    );
  });

  it('refuses a missing required payload field and a key mode for a task without key', () => {
    expect(() => enqueueJobSql(JobTasks.FanOutEvent, {} as { eventId: string })).toThrow(/eventId/);
    expect(() => enqueueJobSql(JobTasks.SweepWebhookLeases, {}, { jobKeyMode: 'replace' })).toThrow(
      /has no job key/,
    );
  });
});

describe('job keys', () => {
  it('builds and reads back the key in SQL and in TypeScript alike', () => {
    expect(jobKeySql(JobTasks.DeliverWebhook, 'd.id')).toBe(`'deliver:' || d.id`);
    expect(jobKeyOf(JobTasks.DeliverWebhook, 'abc')).toBe('deliver:abc');
    // 'fan_out:' is 8 characters: the id starts at the 9th.
    expect(idOfJobKeySql(JobTasks.FanOutEvent, 'j')).toBe('substr(j.key, 9)');
  });

  it('matches a task by name and key prefix, the prefix escaped for LIKE', () => {
    expect(isJobOfTaskSql(JobTasks.FanOutEvent, 'j')).toBe(
      `j.task_identifier = 'fan_out_event' AND j.key LIKE 'fan\\_out:%'`,
    );
  });

  it('has no key for tasks that run queue-wide', () => {
    expect(() => jobKeyOf(JobTasks.PurgeIdempotencyKeys, 'x')).toThrow(/has no job key/);
  });
});
