import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook endpoints, one delivery per (event, endpoint), and every attempt of a delivery.
 * Deliveries carry a lease (`leased_until`): a worker owns a delivery only while its lease runs,
 * so a crashed worker's delivery is picked up again by the sweeper once the lease expires, and
 * two workers can never attempt one delivery at the same time.
 */
export class Webhooks1764800000000 implements MigrationInterface {
  name = 'Webhooks1764800000000';

  async up(db: QueryRunner): Promise<void> {
    // Lets deliveries reference (company_id, id), so a delivery can never join an event of
    // another company.
    await db.query(`ALTER TABLE events ADD CONSTRAINT uq_events_company_id UNIQUE (company_id, id)`);

    await db.query(`
      CREATE TABLE webhook_endpoints (
        id              uuid PRIMARY KEY,
        company_id      uuid NOT NULL REFERENCES companies (id),
        url             text NOT NULL CHECK (url ~ '^https?://' AND length(url) <= 2048),
        -- Event types or '*' (every type, including types added later).
        enabled_events  text[] NOT NULL CHECK (cardinality(enabled_events) >= 1),
        -- Standard Webhooks signing secret (whsec_…). Stored in clear: signing needs it.
        secret          text NOT NULL CHECK (secret ~ '^whsec_[A-Za-z0-9+/]{32,}={0,2}$'),
        status          text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
        created_at      timestamptz NOT NULL DEFAULT now(),
        disabled_at     timestamptz,
        seq             bigint GENERATED ALWAYS AS IDENTITY,
        CONSTRAINT uq_webhook_endpoints_company_id UNIQUE (company_id, id),
        CONSTRAINT uq_webhook_endpoints_seq UNIQUE (seq),
        -- A disabled endpoint says since when; an enabled one has no such date.
        CONSTRAINT ck_webhook_endpoints_disabled_at CHECK ((status = 'disabled') = (disabled_at IS NOT NULL))
      )`);
    // Fan-out reads a company's enabled endpoints; listing pages by creation order.
    await db.query(`CREATE INDEX ix_webhook_endpoints_company_seq ON webhook_endpoints (company_id, seq)`);

    await db.query(`
      CREATE TABLE webhook_deliveries (
        id               uuid PRIMARY KEY,
        company_id       uuid NOT NULL REFERENCES companies (id),
        event_id         uuid NOT NULL,
        endpoint_id      uuid NOT NULL,
        status           text NOT NULL DEFAULT 'pending'
                         CHECK (status IN ('pending', 'delivered', 'failed', 'canceled')),
        -- Attempts started so far (taking a lease starts one): also the next attempt's number - 1.
        attempt_count    integer NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
        next_attempt_at  timestamptz NOT NULL DEFAULT now(),
        -- The lease: set by the worker that starts an attempt, cleared when it records the
        -- result. A lease in the past means its worker died mid-attempt (the sweeper's cue).
        leased_at        timestamptz,
        leased_until     timestamptz,
        lease_token      uuid,
        created_at       timestamptz NOT NULL DEFAULT now(),
        finished_at      timestamptz,
        last_error       text,
        -- One delivery per event and endpoint: a re-run fan-out job inserts nothing twice.
        CONSTRAINT uq_webhook_deliveries_event_endpoint UNIQUE (event_id, endpoint_id),
        CONSTRAINT uq_webhook_deliveries_company_id UNIQUE (company_id, id),
        -- The event, the endpoint and the delivery belong to one company.
        CONSTRAINT fk_webhook_deliveries_event FOREIGN KEY (company_id, event_id)
          REFERENCES events (company_id, id),
        CONSTRAINT fk_webhook_deliveries_endpoint FOREIGN KEY (company_id, endpoint_id)
          REFERENCES webhook_endpoints (company_id, id),
        -- A lease exists only on an unfinished delivery, and always with its owner's token.
        CONSTRAINT ck_webhook_deliveries_lease CHECK (
          (leased_until IS NULL) = (lease_token IS NULL) AND (leased_until IS NULL) = (leased_at IS NULL)
          AND (leased_until IS NULL OR status = 'pending')),
        CONSTRAINT ck_webhook_deliveries_finished CHECK ((status = 'pending') = (finished_at IS NULL))
      )`);
    // The sweeper scans unfinished deliveries only.
    await db.query(`
      CREATE INDEX ix_webhook_deliveries_pending ON webhook_deliveries (leased_until, next_attempt_at)
       WHERE status = 'pending'`);
    await db.query(
      `CREATE INDEX ix_webhook_deliveries_endpoint ON webhook_deliveries (company_id, endpoint_id)`,
    );

    await db.query(`
      CREATE TABLE webhook_attempts (
        id             uuid PRIMARY KEY,
        company_id     uuid NOT NULL REFERENCES companies (id),
        delivery_id    uuid NOT NULL,
        endpoint_id    uuid NOT NULL,
        event_id       uuid NOT NULL,
        attempt_number integer NOT NULL CHECK (attempt_number >= 1),
        -- succeeded: 2xx; failed: any other answer or a network error/timeout; abandoned: the
        -- worker lost its lease (crashed) before recording a result.
        result         text NOT NULL CHECK (result IN ('succeeded', 'failed', 'abandoned')),
        status_code    smallint CHECK (status_code BETWEEN 100 AND 599),
        duration_ms    integer CHECK (duration_ms >= 0),
        error          text,
        started_at     timestamptz NOT NULL,
        finished_at    timestamptz NOT NULL,
        seq            bigint GENERATED ALWAYS AS IDENTITY,
        -- Attempt numbers come from the lease (attempt_count + 1 under the row's lock): an
        -- attempt is recorded at most once.
        CONSTRAINT uq_webhook_attempts_delivery_number UNIQUE (delivery_id, attempt_number),
        CONSTRAINT uq_webhook_attempts_seq UNIQUE (seq),
        CONSTRAINT fk_webhook_attempts_delivery FOREIGN KEY (company_id, delivery_id)
          REFERENCES webhook_deliveries (company_id, id),
        CONSTRAINT ck_webhook_attempts_succeeded CHECK (result <> 'succeeded' OR status_code BETWEEN 200 AND 299)
      )`);
    // GET /v1/webhook-endpoints/{id}/attempts pages by (company, endpoint) in recording order.
    await db.query(
      `CREATE INDEX ix_webhook_attempts_endpoint_seq ON webhook_attempts (company_id, endpoint_id, seq)`,
    );
    // Attempts are history: never rewritten.
    await db.query(`
      CREATE TRIGGER trg_webhook_attempts_immutable BEFORE UPDATE OR DELETE ON webhook_attempts
      FOR EACH ROW EXECUTE FUNCTION forbid_row_changes()`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE webhook_attempts`);
    await db.query(`DROP TABLE webhook_deliveries`);
    await db.query(`DROP TABLE webhook_endpoints`);
    await db.query(`ALTER TABLE events DROP CONSTRAINT uq_events_company_id`);
  }
}
