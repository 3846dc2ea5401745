import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Accounting outputs, part 2 (issue 14):
 * - `isaf_settings`: a company's VAT rate → i.SAF tax code (VMI's PVM classifier) mapping; no
 *   row means the documented defaults;
 * - indexes for reports by document date;
 * - fixed assets (straight-line depreciation) and depreciation runs. One run per company and
 *   period (`uq_depreciation_runs_company_period`), and one charge per company, asset and period
 *   (`uq_depreciation_charges_company_asset_period`): a period is never depreciated twice, not
 *   even by concurrent runs. Assets, runs and charges are immutable.
 */
export class IsafSettingsFixedAssets1766700000000 implements MigrationInterface {
  name = 'IsafSettingsFixedAssets1766700000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE isaf_settings (
        company_id  uuid NOT NULL REFERENCES companies (id),
        -- [{ "vatRate": "21", "taxCode": "PVM1" }, …]: replaces the defaults as a whole.
        tax_codes   jsonb NOT NULL CHECK (jsonb_typeof(tax_codes) = 'array'),
        updated_at  timestamptz NOT NULL,
        CONSTRAINT pk_isaf_settings PRIMARY KEY (company_id)
      )`);

    // Reports select a company's documents by their date.
    await db.query(`CREATE INDEX ix_invoices_company_issue_date ON invoices (company_id, issue_date)`);
    await db.query(
      `CREATE INDEX ix_purchase_invoices_company_issue_date ON purchase_invoices (company_id, issue_date)`,
    );
    await db.query(`CREATE INDEX ix_credit_notes_company_created ON credit_notes (company_id, created_at)`);

    await db.query(`
      CREATE TABLE fixed_assets (
        company_id          uuid NOT NULL REFERENCES companies (id),
        id                  uuid NOT NULL,
        name                text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        currency            char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
        cost                bigint NOT NULL CHECK (cost BETWEEN 1 AND 1000000000000),
        residual_value      bigint NOT NULL CHECK (residual_value >= 0),
        useful_life_months  integer NOT NULL CHECK (useful_life_months BETWEEN 1 AND 1200),
        -- The first month depreciated: always the first day of a month.
        start_month         date NOT NULL CHECK (extract(day FROM start_month) = 1),
        created_at          timestamptz NOT NULL,
        CONSTRAINT pk_fixed_assets PRIMARY KEY (company_id, id),
        CONSTRAINT ck_fixed_assets_residual_below_cost CHECK (residual_value < cost)
      )`);
    await db.query(
      `CREATE INDEX ix_fixed_assets_company_created ON fixed_assets (company_id, created_at, id)`,
    );

    await db.query(`
      CREATE TABLE depreciation_runs (
        company_id    uuid NOT NULL REFERENCES companies (id),
        id            uuid NOT NULL,
        -- The month depreciated: the first day of a month.
        period        date NOT NULL CHECK (extract(day FROM period) = 1),
        currency      char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
        total_amount  bigint NOT NULL CHECK (total_amount >= 0),
        created_at    timestamptz NOT NULL,
        CONSTRAINT pk_depreciation_runs PRIMARY KEY (company_id, id),
        -- One run per company and month, for ever: the run's business key.
        CONSTRAINT uq_depreciation_runs_company_period UNIQUE (company_id, period)
      )`);

    await db.query(`
      CREATE TABLE depreciation_charges (
        company_id   uuid NOT NULL REFERENCES companies (id),
        -- The source id of the charge's journal entry.
        id           uuid NOT NULL,
        run_id       uuid NOT NULL,
        asset_id     uuid NOT NULL,
        period       date NOT NULL,
        -- 1 for the asset's first month … useful_life_months for its last.
        month_number integer NOT NULL CHECK (month_number >= 1),
        amount       bigint NOT NULL CHECK (amount > 0),
        CONSTRAINT pk_depreciation_charges PRIMARY KEY (company_id, id),
        CONSTRAINT fk_depreciation_charges_run FOREIGN KEY (company_id, run_id)
          REFERENCES depreciation_runs (company_id, id),
        CONSTRAINT fk_depreciation_charges_asset FOREIGN KEY (company_id, asset_id)
          REFERENCES fixed_assets (company_id, id),
        -- An asset is depreciated once per month, whatever run posts it.
        CONSTRAINT uq_depreciation_charges_company_asset_period UNIQUE (company_id, asset_id, period),
        CONSTRAINT uq_depreciation_charges_company_asset_month UNIQUE (company_id, asset_id, month_number)
      )`);
    await db.query(
      `CREATE INDEX ix_depreciation_charges_company_run ON depreciation_charges (company_id, run_id)`,
    );

    for (const table of ['fixed_assets', 'depreciation_runs', 'depreciation_charges']) {
      await db.query(`
        CREATE TRIGGER trg_${table}_immutable BEFORE UPDATE OR DELETE ON ${table}
        FOR EACH ROW EXECUTE FUNCTION forbid_row_changes()`);
      await db.query(`
        CREATE TRIGGER trg_${table}_no_truncate BEFORE TRUNCATE ON ${table}
        FOR EACH STATEMENT EXECUTE FUNCTION forbid_truncate()`);
    }
  }

  async down(db: QueryRunner): Promise<void> {
    // Depreciation charges posted immutable journal entries: the previous schema cannot explain them.
    await db.query(`
      DO $$
      BEGIN
        IF EXISTS (SELECT 1 FROM depreciation_charges) THEN
          RAISE EXCEPTION 'depreciation charges exist; their journal entries would lose their source';
        END IF;
      END $$`);
    await db.query(`DELETE FROM idempotency_records
                     WHERE operation IN ('assets.create', 'depreciation_runs.create', 'company.isaf_settings.update')`);
    await db.query(`DROP TABLE depreciation_charges`);
    await db.query(`DROP TABLE depreciation_runs`);
    await db.query(`DROP TABLE fixed_assets`);
    await db.query(`DROP INDEX ix_credit_notes_company_created`);
    await db.query(`DROP INDEX ix_purchase_invoices_company_issue_date`);
    await db.query(`DROP INDEX ix_invoices_company_issue_date`);
    await db.query(`DROP TABLE isaf_settings`);
  }
}
