/**
 * A task of the job queue: its name (graphile-worker's `task_identifier`), the fields of its
 * payload (all strings) and, for a task that runs once per id, its job key `<prefix>:<id>`, which
 * makes a second enqueue of the same id replace the queued job instead of adding one.
 */
export interface JobTask<Payload extends JobPayload = JobPayload> {
  readonly name: string;
  readonly payloadFields: readonly string[];
  readonly key: { readonly prefix: string; readonly field: string } | undefined;
  /** Types only (never set): the payload the task carries. */
  readonly payloadType?: Payload;
}

/** What a job carries: ids, as strings. */
export type JobPayload = Record<string, string>;

const NAME = /^[a-z][a-z_]*$/;

function keyedTask<Payload extends JobPayload>(
  name: string,
  field: keyof Payload & string,
  prefix: string,
): JobTask<Payload> {
  if (!NAME.test(name) || !NAME.test(prefix)) throw new Error(`invalid job task ${name} (${prefix})`);
  return { name, payloadFields: [field], key: { prefix, field } };
}

function unkeyedTask(name: string): JobTask<Record<string, never>> {
  if (!NAME.test(name)) throw new Error(`invalid job task ${name}`);
  return { name, payloadFields: [], key: undefined };
}

/**
 * Every task of the queue, in one place: the names and job keys are one namespace shared by the
 * libs that enqueue a task, run it, and look for it in the queue (the lease sweeper re-queues
 * fan-outs the outbox enqueued; the delivery backlog counts them). Which code runs a task is
 * registered by the lib that owns it (`JobRegistry`).
 */
export const JobTasks = {
  /** Creates one webhook delivery per subscribed endpoint of an event (enqueued by the outbox). */
  FanOutEvent: keyedTask<{ eventId: string }>('fan_out_event', 'eventId', 'fan_out'),
  /** One attempt of one webhook delivery. */
  DeliverWebhook: keyedTask<{ deliveryId: string }>('deliver_webhook', 'deliveryId', 'deliver'),
  /** Recovers deliveries whose worker died (expired lease); by crontab and in each worker. */
  SweepWebhookLeases: unkeyedTask('sweep_webhook_leases'),
  /** Deletes expired idempotency records; by crontab. */
  PurgeIdempotencyKeys: unkeyedTask('purge_idempotency_keys'),
} as const;
