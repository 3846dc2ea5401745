import type { RunningProviderSandbox } from '@ledgerkey/payments';
import type { Queryable } from './tenant-keys';

/** Provider settings for API processes and apps of payment tests: short calls and leases. */
export function paymentEnv(sandbox: Pick<RunningProviderSandbox, 'url' | 'apiKey'>): Record<string, string> {
  return {
    PAYMENT_PROVIDER_URL: sandbox.url,
    PAYMENT_PROVIDER_API_KEY: sandbox.apiKey,
    // Below the sandbox's test hold (TEST_TIMEOUT_HOLD_MS): pm_card_timeout times out.
    PAYMENT_PROVIDER_TIMEOUT_MS: '1000',
    PAYMENT_LEASE_SECONDS: '3',
    PAYMENT_RECOVERY_INTERVAL_MS: '200',
    PAYMENT_RECOVERY_MAX_ATTEMPTS: '10',
    // The tests that reconcile ask for their runs; no worker reconciles other suites' companies.
    PAYMENT_RECONCILIATION_INTERVAL_MINUTES: '0',
  };
}

export interface PaymentRow {
  id: string;
  invoice_id: string;
  status: 'processing' | 'succeeded' | 'failed';
  amount: number;
  failure_code: string | null;
  provider_reference: string;
  provider_charge_id: string | null;
  idempotency_key: string;
}

/** What a company's payments left in the database, to compare with what the provider holds. */
export interface PaymentBooks {
  payments: PaymentRow[];
  /** Journal entries of payments: `<payment id>: <account> <debit>/<credit>, …`. */
  entries: Record<string, string[]>;
  /** Every invoice of the company: gross and paid totals. */
  invoices: Record<string, { gross: number; paid: number }>;
  /** Payment events, `<type> <payment id>`, in feed order. */
  events: string[];
  /** The payments' idempotency records: key → state/attempt. */
  records: Record<string, { state: string; attempt: number; response_status: number | null }>;
  /** Entries whose debits and credits differ (must stay 0). */
  unbalanced: number;
}

export async function paymentBooksOf(db: Queryable, companyId: string): Promise<PaymentBooks> {
  const payments = await db.query<PaymentRow>(
    `SELECT id, invoice_id, status, amount::float8 AS amount, failure_code, provider_reference,
            provider_charge_id, idempotency_key
       FROM payments WHERE company_id = $1 ORDER BY created_at, id`,
    [companyId],
  );
  const lines = await db.query<{ source_id: string; account: string; debit: number; credit: number }>(
    `SELECT e.source_id, l.account, l.debit::float8 AS debit, l.credit::float8 AS credit
       FROM journal_entries e
       JOIN journal_lines l ON l.company_id = e.company_id AND l.entry_id = e.id
      WHERE e.company_id = $1 AND e.source_type = 'payment'
      ORDER BY e.source_id, l.line_no`,
    [companyId],
  );
  const invoices = await db.query<{ id: string; gross: number; paid: number }>(
    `SELECT id, gross_total::float8 AS gross, paid_total::float8 AS paid FROM invoices WHERE company_id = $1`,
    [companyId],
  );
  const events = await db.query<{ type: string; payment_id: string }>(
    `SELECT type, data -> 'object' ->> 'id' AS payment_id FROM events
      WHERE company_id = $1 AND type LIKE 'payment.%' ORDER BY position`,
    [companyId],
  );
  const records = await db.query<{
    key: string;
    state: string;
    attempt: number;
    response_status: number | null;
  }>(
    `SELECT idempotency_key AS key, state, attempt, response_status FROM idempotency_records
      WHERE company_id = $1 AND operation = 'payments.create'`,
    [companyId],
  );
  const unbalanced = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT entry_id FROM journal_lines WHERE company_id = $1
       GROUP BY entry_id HAVING sum(debit) <> sum(credit)) u`,
    [companyId],
  );
  const entries: Record<string, string[]> = {};
  for (const line of lines.rows) {
    (entries[line.source_id] ??= []).push(`${line.account} ${line.debit}/${line.credit}`);
  }
  return {
    payments: payments.rows,
    entries,
    invoices: Object.fromEntries(invoices.rows.map((row) => [row.id, { gross: row.gross, paid: row.paid }])),
    events: events.rows.map((row) => `${row.type} ${row.payment_id}`),
    records: Object.fromEntries(
      records.rows.map((row) => [
        row.key,
        { state: row.state, attempt: row.attempt, response_status: row.response_status },
      ]),
    ),
    unbalanced: unbalanced.rows[0].n,
  };
}

/** The journal lines of a succeeded payment of `amount`. */
export function paymentEntryOf(amount: number): string[] {
  return [`provider_clearing ${amount}/0`, `accounts_receivable 0/${amount}`];
}

/** Resolves when `condition` holds, polling; rejects after `timeoutMs`. */
export async function eventually<T>(
  probe: () => Promise<T>,
  holds: (value: T) => boolean,
  timeoutMs = 15_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (holds(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
