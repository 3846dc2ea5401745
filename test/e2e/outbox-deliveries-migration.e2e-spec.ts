import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import { openMigrationDataSource, runMigrations } from '../../libs/database/src';
import { MIGRATIONS } from '../../migrations';
import { OutboxDeliveries1765600000000 } from '../../migrations/1765600000000-outbox-deliveries';
import {
  createIsolatedDatabase,
  type IsolatedDatabase,
  isolatedDatabasePool,
} from '../support/isolated-database';

const MIGRATION = OutboxDeliveries1765600000000;

/**
 * The migration on a database with work queued as the previous version queued it: fan-out jobs
 * (with and without the company) become deliveries, delivery jobs are dropped (their deliveries
 * stay due), and no fan-out or delivery job is left.
 */
describe('migration OutboxDeliveries1765600000000 with queued jobs', () => {
  const position = MIGRATIONS.indexOf(MIGRATION);
  let database: IsolatedDatabase;
  let db: Pool;
  let dataSource: DataSource;
  const company = randomUUID();
  const [endpoint, invoicesOnly, disabled] = [randomUUID(), randomUUID(), randomUUID()];
  const [withCompany, withoutCompany, creditNote, alreadyFannedOut] = Array.from({ length: 4 }, () =>
    randomUUID(),
  );
  const existingDelivery = randomUUID();

  async function anEvent(id: string, type: string): Promise<void> {
    await db.query(
      `WITH next AS (
         INSERT INTO event_sequences AS s (company_id, last_position) VALUES ($2, 1)
         ON CONFLICT (company_id) DO UPDATE SET last_position = s.last_position + 1 RETURNING last_position
       )
       INSERT INTO events (id, company_id, position, type, data, created_at)
       SELECT $1, $2, next.last_position, $3, '{"object":{}}', now() FROM next`,
      [id, company, type],
    );
  }

  beforeAll(async () => {
    expect(position).toBeGreaterThan(0);
    database = await createIsolatedDatabase('outbox_deliveries_migration', {
      migrations: MIGRATIONS.slice(0, position),
    });
    db = isolatedDatabasePool(database, 2);
    await db.query(
      `INSERT INTO companies (id, name, country_code, currency) VALUES ($1, 'Relay', 'LT', 'EUR')`,
      [company],
    );
    for (const [id, events, status] of [
      [endpoint, '{*}', 'enabled'],
      [invoicesOnly, '{invoice.created}', 'enabled'],
      [disabled, '{*}', 'disabled'],
    ]) {
      await db.query(
        `INSERT INTO webhook_endpoints (id, company_id, url, enabled_events, secret, status, disabled_at)
         VALUES ($1, $2, 'https://example.com/hook', $3, 'whsec_' || repeat('A', 32), $4::text,
                 CASE WHEN $4::text = 'disabled' THEN now() END)`,
        [id, company, events, status],
      );
    }
    await anEvent(withCompany, 'invoice.created');
    await anEvent(withoutCompany, 'invoice.created');
    await anEvent(creditNote, 'credit_note.created');
    await anEvent(alreadyFannedOut, 'invoice.created');
    // As the previous version queued them (TenantKeys1765500000000 and before).
    await db.query(
      `SELECT graphile_worker.add_job('fan_out_event', json_build_object('companyId', $2::uuid, 'eventId', $1::uuid),
                                      job_key := 'fan_out:' || $1)`,
      [withCompany, company],
    );
    for (const id of [withoutCompany, creditNote]) {
      await db.query(
        `SELECT graphile_worker.add_job('fan_out_event', json_build_object('eventId', $1::uuid),
                                        job_key := 'fan_out:' || $1)`,
        [id],
      );
    }
    await db.query(
      `INSERT INTO webhook_deliveries (id, company_id, event_id, endpoint_id, attempt_count, next_attempt_at)
       VALUES ($1, $2, $3, $4, 2, now() + interval '1 hour')`,
      [existingDelivery, company, alreadyFannedOut, endpoint],
    );
    await db.query(
      `SELECT graphile_worker.add_job('deliver_webhook', json_build_object('companyId', $2::uuid, 'deliveryId', $1::uuid),
                                      run_at := now() + interval '1 hour', job_key := 'deliver:' || $1)`,
      [existingDelivery, company],
    );
    // Another task's job is left alone.
    await db.query(`SELECT graphile_worker.add_job('purge_idempotency_keys', '{}'::json)`);
    dataSource = await openMigrationDataSource({
      url: database.url,
      poolSize: 2,
      applicationName: 'ledgerkey-migration-test',
      migrations: MIGRATIONS.slice(0, position + 1),
    });
  }, 60_000);

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.end();
    await database?.drop();
  });

  it('up: queued fan-outs become due deliveries, delivery jobs are dropped, other jobs stay', async () => {
    expect(await runMigrations(dataSource)).toEqual([MIGRATION.name]);
    const { rows } = await db.query<{ event_id: string; endpoint_id: string; status: string; due: boolean }>(
      `SELECT event_id, endpoint_id, status, next_attempt_at <= now() AS due
         FROM webhook_deliveries WHERE company_id = $1`,
      [company],
    );
    const deliveries = (eventId: string) =>
      rows
        .filter((row) => row.event_id === eventId)
        .map(({ endpoint_id, status, due }) => ({ endpoint_id, status, due }))
        .sort((x, y) => x.endpoint_id.localeCompare(y.endpoint_id));
    const both = [
      { endpoint_id: endpoint, status: 'pending', due: true },
      { endpoint_id: invoicesOnly, status: 'pending', due: true },
    ].sort((x, y) => x.endpoint_id.localeCompare(y.endpoint_id));
    expect(deliveries(withCompany)).toEqual(both);
    expect(deliveries(withoutCompany)).toEqual(both);
    expect(deliveries(creditNote)).toEqual([{ endpoint_id: endpoint, status: 'pending', due: true }]);
    // The delivery whose job was dropped keeps its state: due in an hour, its third attempt next.
    expect(deliveries(alreadyFannedOut)).toEqual([{ endpoint_id: endpoint, status: 'pending', due: false }]);

    const jobs = await db.query<{ task_identifier: string }>(
      `SELECT task_identifier FROM graphile_worker.jobs`,
    );
    expect(jobs.rows.map((job) => job.task_identifier)).toEqual(['purge_idempotency_keys']);
  });

  it('after up: fan_out_event creates nothing twice and notifies only when it created a delivery', async () => {
    const listener = await db.connect();
    const notified: string[] = [];
    listener.on('notification', (message) => notified.push(message.channel));
    try {
      await listener.query('LISTEN webhook_deliveries');
      const again = await db.query<{ created: number }>(
        `SELECT fan_out_event($1, $2, 'invoice.created') AS created`,
        [company, withCompany],
      );
      expect(again.rows[0].created).toBe(0);
      const fresh = randomUUID();
      await anEvent(fresh, 'invoice.created');
      const created = await db.query<{ created: number }>(
        `SELECT fan_out_event($1, $2, 'invoice.created') AS created`,
        [company, fresh],
      );
      expect(created.rows[0].created).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(notified).toEqual(['webhook_deliveries']);
    } finally {
      await listener.query('UNLISTEN *');
      listener.release();
    }
  });

  it('down: removes the function, keeps the deliveries', async () => {
    await dataSource.undoLastMigration();
    const { rows } = await db.query(`SELECT to_regprocedure('fan_out_event(uuid, uuid, text)') AS fn`);
    expect(rows[0].fn).toBeNull();
    const deliveries = await db.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE company_id = $1`,
      [company],
    );
    expect(deliveries.rows[0].n).toBe(8);
  });
});
