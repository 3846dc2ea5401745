/**
 * The Redis baseline's own schema (applied by the bench to a database of its own; TypeORM's
 * `synchronize` stays off, as in any team that reviews its DDL). What an ordinary invoicing
 * service keeps in PostgreSQL: companies with API keys, a counter row per series, invoices and
 * lines, journal entries and lines, and an outbox of events.
 */
export const BASELINE_SCHEMA = `
CREATE TABLE companies (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  country_code char(2) NOT NULL,
  currency char(3) NOT NULL,
  api_key_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE document_sequences (
  company_id uuid NOT NULL REFERENCES companies (id),
  series text NOT NULL,
  last_value bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (company_id, series)
);

CREATE TABLE invoices (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id uuid NOT NULL REFERENCES companies (id),
  series text NOT NULL,
  sequence bigint NOT NULL,
  number text NOT NULL,
  currency char(3) NOT NULL,
  issue_date date NOT NULL,
  due_date date,
  customer jsonb NOT NULL,
  notes text,
  vat_breakdown jsonb NOT NULL,
  net_total bigint NOT NULL,
  vat_total bigint NOT NULL,
  gross_total bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT uq_invoices_company_series_sequence UNIQUE (company_id, series, sequence)
);

CREATE TABLE invoice_lines (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  invoice_id uuid NOT NULL REFERENCES invoices (id),
  position int NOT NULL,
  description text NOT NULL,
  quantity numeric NOT NULL,
  unit_price bigint NOT NULL,
  vat_rate numeric NOT NULL,
  net_amount bigint NOT NULL
);
CREATE INDEX ix_invoice_lines_invoice ON invoice_lines (invoice_id);

CREATE TABLE journal_entries (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id uuid NOT NULL REFERENCES companies (id),
  currency char(3) NOT NULL,
  source_type text NOT NULL,
  source_id uuid NOT NULL,
  memo text NOT NULL,
  posted_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE journal_lines (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  entry_id uuid NOT NULL REFERENCES journal_entries (id),
  account text NOT NULL,
  debit bigint NOT NULL DEFAULT 0,
  credit bigint NOT NULL DEFAULT 0
);
CREATE INDEX ix_journal_lines_entry ON journal_lines (entry_id);

CREATE TABLE events (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id uuid NOT NULL REFERENCES companies (id),
  type text NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
`;
