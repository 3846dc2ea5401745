import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The outbox: one event per created document, written in the document's transaction.
 * Events are listed in a stable commit order: by the id of the writing transaction, and only
 * once no older transaction is still running (see EventsRepository.list).
 */
export class Events1764700000000 implements MigrationInterface {
  name = 'Events1764700000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE events (
        id          uuid PRIMARY KEY,
        company_id  uuid NOT NULL REFERENCES companies (id),
        type        text NOT NULL CHECK (type ~ '^[a-z_]+\\.[a-z_]+$'),
        data        jsonb NOT NULL,
        created_at  timestamptz NOT NULL,
        -- The writing transaction (top level, also from inside a savepoint) and the order within
        -- it: together the listing order.
        xid         xid8 NOT NULL DEFAULT pg_current_xact_id(),
        seq         bigint GENERATED ALWAYS AS IDENTITY,
        CONSTRAINT uq_events_seq UNIQUE (seq)
      )`);
    await db.query(`CREATE INDEX ix_events_company_order ON events (company_id, xid, seq)`);
    await db.query(`
      CREATE TRIGGER trg_events_immutable BEFORE UPDATE OR DELETE ON events
      FOR EACH ROW EXECUTE FUNCTION forbid_row_changes()`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE events`);
  }
}
