import { Injectable } from '@nestjs/common';
import { TransactionHost, type PgTransactionalAdapter } from '@ledgerkey/database';
import { creditNoteDateBetween, DocumentDate } from '../document-dates';
import type { ReportingPeriod } from '../reporting-period';

export interface BreakdownRow {
  vatRate: string;
  netAmount: number;
  vatAmount: number;
}

interface Party {
  name: string;
  vatId?: string | null;
  countryCode: string;
}

/** An issued invoice or credit note of the period, as i.SAF lists it. */
export interface SalesRow {
  kind: 'invoice' | 'credit_note';
  number: string;
  date: string;
  currency: string;
  customer: Party;
  vat_breakdown: BreakdownRow[];
  /** The corrected invoice, for a credit note. */
  invoice_number: string | null;
  invoice_date: string | null;
}

export interface PurchaseRow {
  document_number: string;
  date: string;
  registration_date: string;
  currency: string;
  supplier: Party;
  vat_breakdown: BreakdownRow[];
}

/** The documents of a period as the i.SAF register lists them (read only). */
@Injectable()
export class IsafDocumentsRepository {
  constructor(private readonly txHost: TransactionHost<PgTransactionalAdapter>) {}

  /** Invoices then credit notes dated in the period, each in number order. */
  sales(companyId: string, period: ReportingPeriod): Promise<SalesRow[]> {
    return this.txHost.tx.query<SalesRow>(
      `SELECT 'invoice' AS kind, i.number, to_char(${DocumentDate.invoice}, 'YYYY-MM-DD') AS date, i.currency,
              i.customer, i.vat_breakdown, NULL AS invoice_number, NULL AS invoice_date
         FROM invoices i
        WHERE i.company_id = $1 AND ${DocumentDate.invoice} BETWEEN $2::date AND $3::date
       UNION ALL
       SELECT 'credit_note', c.number, to_char(${DocumentDate.creditNote}, 'YYYY-MM-DD'), c.currency,
              i.customer, c.vat_breakdown, i.number, to_char(i.issue_date, 'YYYY-MM-DD')
         FROM credit_notes c JOIN invoices i ON i.company_id = c.company_id AND i.id = c.invoice_id
        WHERE c.company_id = $1 AND ${creditNoteDateBetween('$2', '$3')}
       ORDER BY kind DESC, number`,
      [companyId, period.from, period.to],
    );
  }

  /** Purchase invoices dated in the period, in the order they were recorded. */
  purchases(companyId: string, period: ReportingPeriod): Promise<PurchaseRow[]> {
    return this.txHost.tx.query<PurchaseRow>(
      `SELECT p.document_number, to_char(${DocumentDate.purchaseInvoice}, 'YYYY-MM-DD') AS date,
              to_char((p.created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS registration_date,
              p.currency, p.supplier, p.vat_breakdown
         FROM purchase_invoices p
        WHERE p.company_id = $1 AND ${DocumentDate.purchaseInvoice} BETWEEN $2::date AND $3::date
        ORDER BY p.created_at, p.id`,
      [companyId, period.from, period.to],
    );
  }
}
