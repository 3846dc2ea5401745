import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook deliveries are made from the outbox itself instead of one queued job per event.
 *
 * `fan_out_event(company, event, type)` inserts one pending delivery per enabled endpoint of the
 * company subscribed to the type and, only when it inserted one, notifies the channel
 * `webhook_deliveries` (delivered at commit; the worker's dispatcher LISTENs to it and also polls).
 * The outbox calls it in the very statement that inserts the event, so the event and its
 * deliveries commit together; a company without endpoints pays one index probe, and no job, no
 * NOTIFY. The dispatcher then takes due deliveries straight from `webhook_deliveries` (their
 * `next_attempt_at`), so a delivery needs no job either.
 *
 * Pending work of the job queue moves over: every queued fan-out job is fanned out here and
 * removed; every queued delivery job is removed (its delivery row is due at its
 * `next_attempt_at`, where the dispatcher finds it). A job locked by a worker of the previous
 * version keeps running there: fan-out is idempotent and the delivery's lease decides who
 * attempts. On a fresh database the job queue's schema does not exist yet: nothing to move.
 */
export class OutboxDeliveries1765600000000 implements MigrationInterface {
  name = 'OutboxDeliveries1765600000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE FUNCTION fan_out_event(p_company_id uuid, p_event_id uuid, p_type text) RETURNS integer
      LANGUAGE plpgsql AS $$
      DECLARE
        created integer;
      BEGIN
        INSERT INTO webhook_deliveries (id, company_id, event_id, endpoint_id)
        SELECT gen_random_uuid(), p_company_id, p_event_id, w.id
          FROM webhook_endpoints w
         WHERE w.company_id = p_company_id
           AND w.status = 'enabled'
           AND (w.enabled_events @> ARRAY[p_type] OR w.enabled_events @> ARRAY['*'])
        -- Called again for the same event (a moved job, a previous version's job): nothing twice.
        ON CONFLICT (company_id, event_id, endpoint_id) DO NOTHING;
        GET DIAGNOSTICS created = ROW_COUNT;
        IF created > 0 THEN
          PERFORM pg_notify('webhook_deliveries', '');
        END IF;
        RETURN created;
      END
      $$`);

    const [queue] = (await db.query(
      `SELECT to_regclass('graphile_worker.jobs') IS NOT NULL AS present`,
    )) as Array<{
      present: boolean;
    }>;
    if (!queue.present) return;
    await db.query(`SET LOCAL statement_timeout = 0`);
    // Keys are 'fan_out:<event id>' and 'deliver:<delivery id>' (JobTasks); the payload may lack
    // the company (jobs older than TenantKeys1765500000000), the event row names it.
    await db.query(`
      SELECT fan_out_event(e.company_id, e.id, e.type)
        FROM graphile_worker.jobs j
        JOIN events e ON e.id = substr(j.key, 9)::uuid
       WHERE j.task_identifier = 'fan_out_event' AND j.key LIKE 'fan\\_out:%'`);
    // remove_job deletes an unlocked job; a locked one loses its key and is not retried.
    await db.query(`
      SELECT graphile_worker.remove_job(j.key)
        FROM graphile_worker.jobs j
       WHERE (j.task_identifier = 'fan_out_event' AND j.key LIKE 'fan\\_out:%')
          OR (j.task_identifier = 'deliver_webhook' AND j.key LIKE 'deliver:%')`);
  }

  async down(db: QueryRunner): Promise<void> {
    // Deliveries stay; the previous version's sweeper queues a job for each pending one.
    await db.query(`DROP FUNCTION fan_out_event(uuid, uuid, text)`);
  }
}
