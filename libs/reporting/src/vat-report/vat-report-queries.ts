import { Injectable } from '@nestjs/common';
import { TransactionHost, type PgTransactionalAdapter } from '@ledgerkey/database';
import { creditNoteDateBetween, DocumentDate } from '../document-dates';
import type { ReportingPeriod } from '../reporting-period';
import type { VatRateRowView, VatReportCurrencyView, VatReportView } from './vat-report.view';

interface VatRow {
  currency: string;
  /** null on the per-currency total row of the grouping sets */
  vat_rate: string | null;
  sales_net: string;
  sales_vat: string;
  purchases_net: string;
  purchases_vat: string;
  payable: string;
}

/**
 * Every VAT breakdown row of the period's documents, signed: invoices add to sales, credit notes
 * subtract from them, purchase invoices add to purchases. Summed in SQL (bigint sums are
 * numeric: exact) and read as text, never through a JS number.
 */
const VAT_REPORT_SQL = `
  WITH movements AS (
    SELECT i.currency, b->>'vatRate' AS vat_rate,
           (b->>'netAmount')::bigint AS sales_net, (b->>'vatAmount')::bigint AS sales_vat,
           0::bigint AS purchases_net, 0::bigint AS purchases_vat
      FROM invoices i, jsonb_array_elements(i.vat_breakdown) AS b
     WHERE i.company_id = $1 AND ${DocumentDate.invoice} BETWEEN $2::date AND $3::date
    UNION ALL
    SELECT c.currency, b->>'vatRate', -(b->>'netAmount')::bigint, -(b->>'vatAmount')::bigint, 0, 0
      FROM credit_notes c, jsonb_array_elements(c.vat_breakdown) AS b
     WHERE c.company_id = $1 AND ${creditNoteDateBetween('$2', '$3')}
    UNION ALL
    SELECT p.currency, b->>'vatRate', 0, 0, (b->>'netAmount')::bigint, (b->>'vatAmount')::bigint
      FROM purchase_invoices p, jsonb_array_elements(p.vat_breakdown) AS b
     WHERE p.company_id = $1 AND ${DocumentDate.purchaseInvoice} BETWEEN $2::date AND $3::date
  )
  SELECT currency, vat_rate,
         sum(sales_net)::text AS sales_net, sum(sales_vat)::text AS sales_vat,
         sum(purchases_net)::text AS purchases_net, sum(purchases_vat)::text AS purchases_vat,
         (sum(sales_vat) - sum(purchases_vat))::text AS payable
    FROM movements
   GROUP BY GROUPING SETS ((currency, vat_rate), (currency))
   ORDER BY currency, vat_rate::numeric DESC NULLS LAST`;

/** The VAT report: what a VAT return declares, from the documents themselves. */
@Injectable()
export class VatReportQueries {
  constructor(private readonly txHost: TransactionHost<PgTransactionalAdapter>) {}

  /**
   * Per currency and VAT rate, sales (invoices − credit notes) and purchases, net and VAT, and
   * the payable balance, for documents dated within the period. Equal, per currency, to the
   * movements of revenue, vat_payable, expense and vat_receivable in the journal entries dated
   * within the period (`entry_date`).
   */
  async report(companyId: string, period: ReportingPeriod): Promise<VatReportView> {
    const rows = await this.txHost.tx.query<VatRow>(VAT_REPORT_SQL, [companyId, period.from, period.to]);
    const currencies: VatReportCurrencyView[] = [];
    let rates: VatRateRowView[] = [];
    for (const row of rows) {
      const amounts = {
        salesNet: row.sales_net,
        salesVat: row.sales_vat,
        purchasesNet: row.purchases_net,
        purchasesVat: row.purchases_vat,
        payable: row.payable,
      };
      if (row.vat_rate !== null) {
        rates.push({ vatRate: row.vat_rate, ...amounts });
      } else {
        // The total row closes its currency's rate rows (ORDER BY … NULLS LAST).
        currencies.push({ currency: row.currency, rates, totals: amounts });
        rates = [];
      }
    }
    return { object: 'vat_report', from: period.from, to: period.to, currencies };
  }
}
