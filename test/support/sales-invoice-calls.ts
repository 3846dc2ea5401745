import type { Pool } from 'pg';
import type { Response } from 'supertest';
import { newKey } from './invoice.builder';
import type { TestApp, TestCompany } from './test-app';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export interface InvoiceBody {
  id: string;
  number: string;
  series: string;
  sequence: number;
  currency: string;
  netTotal: number;
  vatTotal: number;
  grossTotal: number;
  createdAt: string;
}

export interface JournalEntryBody {
  id: string;
  object: string;
  currency: string;
  sourceType: string;
  sourceId: string;
  memo: string;
  postedAt: string;
  entryDate: string;
  lines: Array<{ account: string; debit: number; credit: number }>;
}

/** The posting of a sales invoice as GET /v1/ledger/entries shows it (zero lines dropped). */
export function invoicePostingLines(totals: { netTotal: number; vatTotal: number; grossTotal: number }) {
  return [
    { account: 'accounts_receivable', debit: totals.grossTotal, credit: 0 },
    { account: 'revenue', debit: 0, credit: totals.netTotal },
    ...(totals.vatTotal === 0 ? [] : [{ account: 'vat_payable', debit: 0, credit: totals.vatTotal }]),
  ];
}

/** The app and pool of a sales-invoice spec, started in its beforeAll. */
export interface SalesInvoiceRig {
  t: TestApp;
  db: Pool;
}

/** Issuing and reading sales invoices on the spec's rig (`ctx()`). */
export function salesInvoiceCalls(ctx: () => SalesInvoiceRig) {
  function create(company: TestCompany, body: Record<string, unknown>) {
    const { t } = ctx();
    return t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send(body);
  }

  async function issue(
    company: TestCompany,
    body: Record<string, unknown>,
  ): Promise<Response & { body: InvoiceBody }> {
    const response = await create(company, body);
    expect(response.status).toBe(201);
    return response;
  }

  async function ledgerEntries(
    company: TestCompany,
    query = '',
  ): Promise<{ data: JournalEntryBody[]; hasMore: boolean }> {
    const { t } = ctx();
    const response = await t.http.get(`/v1/ledger/entries${query}`).set(company.auth);
    expect(response.status).toBe(200);
    expect(response.body.object).toBe('list');
    return response.body as { data: JournalEntryBody[]; hasMore: boolean };
  }

  async function storedTotals(invoiceId: string) {
    const { db } = ctx();
    const { rows } = await db.query(
      `SELECT net_total::int, vat_total::int, gross_total::int, vat_breakdown,
              (SELECT json_agg(net_amount ORDER BY position) FROM invoice_lines WHERE invoice_id = i.id) AS line_nets
         FROM invoices i WHERE id = $1`,
      [invoiceId],
    );
    expect(rows).toHaveLength(1);
    return rows[0] as {
      net_total: number;
      vat_total: number;
      gross_total: number;
      vat_breakdown: unknown;
      line_nets: number[];
    };
  }

  async function storedPostingLines(invoiceId: string) {
    const { db } = ctx();
    const { rows } = await db.query(
      `SELECT l.account, l.debit::int, l.credit::int
         FROM journal_lines l JOIN journal_entries e ON e.id = l.entry_id
        WHERE e.source_type = 'invoice' AND e.source_id = $1
        ORDER BY l.line_no`,
      [invoiceId],
    );
    return rows;
  }

  return { create, issue, ledgerEntries, storedTotals, storedPostingLines };
}
