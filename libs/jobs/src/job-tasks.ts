/**
 * A task of the job queue: its name (graphile-worker's `task_identifier`), the fields of its
 * payload (all strings; some may be missing from older jobs) and, for a task that runs once per
 * id, its job key `<prefix>:<id>`, which makes a second enqueue of the same id replace the queued
 * job instead of adding one.
 */
export interface JobTask<Payload extends JobPayload = JobPayload> {
  readonly name: string;
  /** Every payload field, in the order the payload lists them. */
  readonly payloadFields: readonly string[];
  /** The fields a job may lack. */
  readonly optionalFields: readonly string[];
  readonly key: { readonly prefix: string; readonly field: string } | undefined;
  /** Types only (never set): the payload the task carries. */
  readonly payloadType?: Payload;
}

/** What a job carries: ids, as strings. */
export type JobPayload = Record<string, string | undefined>;

interface JobTaskDefinition<Payload extends JobPayload> {
  fields: ReadonlyArray<keyof Payload & string>;
  optional?: ReadonlyArray<keyof Payload & string>;
  key?: { prefix: string; field: keyof Payload & string };
}

const NAME = /^[a-z][a-z_]*$/;
const FIELD = /^[A-Za-z][A-Za-z0-9]*$/;

function jobTask<Payload extends JobPayload>(
  name: string,
  { fields, optional = [], key }: JobTaskDefinition<Payload> = { fields: [] },
): JobTask<Payload> {
  if (!NAME.test(name) || (key && !NAME.test(key.prefix)) || !fields.every((field) => FIELD.test(field))) {
    throw new Error(`invalid job task ${name}`);
  }
  return { name, payloadFields: fields, optionalFields: optional, key };
}

/**
 * Every task of the queue, in one place: the names and job keys are one namespace shared by the
 * libs that enqueue a task, run it, and look for it in the queue. Which code runs a task is
 * registered by the lib that owns it (`JobRegistry`).
 */
export const JobTasks = {
  /**
   * Previous versions only: created the webhook deliveries of an event. The outbox now does that
   * in the event's own statement (OutboxDeliveries1765600000000, which also moved the queued
   * jobs); workers still run a job an API process of the previous version queues during a rolling
   * upgrade. `companyId` is missing from jobs queued before TenantKeys1765500000000.
   */
  FanOutEvent: jobTask<{ companyId?: string; eventId: string }>('fan_out_event', {
    fields: ['companyId', 'eventId'],
    optional: ['companyId'],
    key: { prefix: 'fan_out', field: 'eventId' },
  }),
  /**
   * Previous versions only: one attempt of one webhook delivery. The dispatcher now takes due
   * deliveries from their table; workers still run a job a worker of the previous version queued
   * during a rolling upgrade (the delivery's lease decides who attempts). `companyId` is missing
   * from jobs queued before TenantKeys1765500000000.
   */
  DeliverWebhook: jobTask<{ companyId?: string; deliveryId: string }>('deliver_webhook', {
    fields: ['companyId', 'deliveryId'],
    optional: ['companyId'],
    key: { prefix: 'deliver', field: 'deliveryId' },
  }),
  /** Recovers deliveries whose worker died (expired lease); by crontab and in each worker. */
  SweepWebhookLeases: jobTask<Record<string, never>>('sweep_webhook_leases'),
  /** Deletes expired idempotency records; by crontab. */
  PurgeIdempotencyKeys: jobTask<Record<string, never>>('purge_idempotency_keys'),
  /** Resumes payments whose attempt stopped without an outcome; by crontab and in each worker. */
  RecoverPayments: jobTask<Record<string, never>>('recover_payments'),
  /** Applies parked provider events that are due; by crontab and in each worker. */
  RetryParkedProviderEvents: jobTask<Record<string, never>>('retry_parked_provider_events'),
  /** Reconciles each active company's payments with the provider; by crontab. */
  ReconcilePayments: jobTask<Record<string, never>>('reconcile_payments'),
} as const;
