import { Injectable } from '@nestjs/common';
import {
  type ListCondition,
  type Metadata,
  metadataOf,
  type Page,
  type PageRequest,
  Propagation,
  TenantReader,
  Transactional,
  TransactionHost,
  type PgTransactionalAdapter,
} from '@ledgerkey/database';
import {
  insertLinesSql,
  lineParameters,
  linesAggregateSql,
  partyOf,
  type StoredAmounts,
  storedAmountsOf,
  totalsParameters,
} from '@ledgerkey/documents';
import {
  type CompanyProfile,
  companyProfileOf,
  sellerSnapshotSql,
  storedProfileOf,
} from '@ledgerkey/tenancy';
import { documentNumberSql } from '../numbering/document-number';
import { nextSequenceValueSql } from '../numbering/document-sequence.repository';
import type { InvoiceView } from './invoice.view';
import {
  creditStatusSql,
  type InvoiceCreditStatus,
  invoiceStatusOf,
  paymentStatusSql,
  type InvoicePaymentStatus,
} from './invoice-status';

interface InvoiceRow extends StoredAmounts {
  id: string;
  number: string;
  series: string;
  sequence: string;
  status: 'issued';
  order_id: string | null;
  currency: string;
  issue_date: string;
  due_date: string | null;
  seller: CompanyProfile;
  customer: InvoiceView['customer'];
  notes: string | null;
  credited_total: string;
  paid_total: string;
  metadata: Metadata;
  created_at: Date;
}

const SELECT_INVOICE = `
  SELECT i.id, i.number, i.series, i.sequence, i.status, i.order_id, i.currency,
         to_char(i.issue_date, 'YYYY-MM-DD') AS issue_date,
         to_char(i.due_date, 'YYYY-MM-DD') AS due_date,
         i.seller, i.customer, i.notes, i.vat_breakdown, i.net_total, i.vat_total, i.gross_total,
         i.credited_total, i.paid_total, i.metadata, i.created_at,
         ${linesAggregateSql('invoice_lines', 'invoice_id', 'i')}
    FROM invoices i`;

/** An invoice before its INSERT: what the statement that stores it adds is not known yet. */
export type InvoiceDraft = Omit<InvoiceView, 'number' | 'sequence' | 'seller'>;

/** What the statement that stores an invoice gives it: its number, and its seller snapshot. */
export interface IssuedInvoiceNumber {
  sequence: number;
  number: string;
  seller: CompanyProfile;
}

/** An invoice as later documents see it while holding its row lock. */
export interface LockedInvoice {
  id: string;
  number: string;
  currency: string;
  vatBreakdown: InvoiceView['vatBreakdown'];
  grossTotal: number;
  creditedTotal: number;
  paidTotal: number;
}

interface LockedInvoiceRow {
  id: string;
  number: string;
  currency: string;
  vat_breakdown: InvoiceView['vatBreakdown'];
  gross_total: string;
  credited_total: string;
  paid_total: string;
}

function toView(row: InvoiceRow): InvoiceView {
  const amounts = storedAmountsOf(row);
  const creditedTotal = Number(row.credited_total);
  const paidTotal = Number(row.paid_total);
  return {
    id: row.id,
    object: 'invoice',
    number: row.number,
    series: row.series,
    sequence: Number(row.sequence),
    status: row.status,
    orderId: row.order_id,
    currency: row.currency,
    issueDate: row.issue_date,
    dueDate: row.due_date,
    // Rebuilt member by member: jsonb does not keep key order, the API does.
    seller: companyProfileOf(row.seller, row.seller.address.countryCode),
    customer: partyOf(row.customer),
    ...amounts,
    creditedTotal,
    paidTotal,
    ...invoiceStatusOf({ grossTotal: amounts.grossTotal, creditedTotal, paidTotal }),
    notes: row.notes,
    metadata: metadataOf(row.metadata),
    createdAt: row.created_at.toISOString(),
  };
}

/** Keyset order (series, sequence): gapless numbers, unique per series. */
const INVOICES = new TenantReader('invoices', 'i', SELECT_INVOICE, ['series', 'sequence'], toView);

/** Invoices of one company. Every method takes the company id first: no cross-tenant reads. */
@Injectable()
export class InvoicesRepository {
  constructor(private readonly txHost: TransactionHost<PgTransactionalAdapter>) {}

  findById(companyId: string, invoiceId: string): Promise<InvoiceView | null> {
    return INVOICES.findById(this.txHost.tx, companyId, invoiceId);
  }

  /** A page in (series, sequence) order, or its reverse, of the invoices matching `filter`. */
  list(companyId: string, page: PageRequest, filter: InvoiceListFilter = {}): Promise<Page<InvoiceView>> {
    return INVOICES.list(this.txHost.tx, companyId, page, invoiceConditions(filter));
  }

  /**
   * Takes the invoice's number and inserts it with its lines, in one statement: the series'
   * next value (`document_sequences`, gapless: its row stays locked until the transaction ends,
   * and a rollback un-takes the number) and the seller, the company's profile as this statement
   * sees it (`company_seller`), snapshotted for ever.
   * `ON CONFLICT ... DO NOTHING` on the order index: a concurrent invoice for the same order
   * makes this insert wait for it and then insert nothing, instead of aborting the
   * transaction, so the caller can still look up the winner (and rolls the number back).
   * @returns what the statement gave the invoice; null when the order already has an invoice
   *   (nothing was inserted)
   */
  @Transactional(Propagation.Mandatory)
  async insert(companyId: string, invoice: InvoiceDraft): Promise<IssuedInvoiceNumber | null> {
    const rows = await this.txHost.tx.query<{ sequence: string; number: string; seller: CompanyProfile }>(
      `WITH next AS (
         ${nextSequenceValueSql('$2', `'invoice'`, '$3')}
       ), invoice AS (
         INSERT INTO invoices (id, company_id, series, sequence, number, status, order_id, currency,
                               issue_date, due_date, customer, notes, vat_breakdown, net_total,
                               vat_total, gross_total, created_at, seller, metadata)
         SELECT $1, $2, $3, next.last_value, ${documentNumberSql('$3', 'next.last_value')}, 'issued', $4,
                $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, ${sellerSnapshotSql('$2')}, $15
           FROM next
         ON CONFLICT (company_id, order_id) WHERE order_id IS NOT NULL DO NOTHING
         RETURNING id, sequence, number, seller
       ), lines AS (
         ${insertLinesSql('invoice_lines', 'invoice_id', 'invoice', 16)}
       )
       SELECT sequence, number, seller FROM invoice`,
      [
        invoice.id,
        companyId,
        invoice.series,
        invoice.orderId,
        invoice.currency,
        invoice.issueDate,
        invoice.dueDate,
        JSON.stringify(invoice.customer),
        invoice.notes,
        ...totalsParameters(invoice),
        invoice.createdAt,
        JSON.stringify(invoice.metadata),
        ...lineParameters(invoice.lines),
      ],
    );
    if (!rows[0]) return null;
    const [{ sequence, number, seller }] = rows;
    return { sequence: Number(sequence), number, seller: storedProfileOf(seller) };
  }

  /**
   * Locks invoices of this company for the rest of the transaction, in id order so that two
   * documents touching the same invoices cannot deadlock. Later documents (credit notes,
   * settlements) check and change running totals under this lock, so concurrent ones cannot
   * together exceed an invoice.
   * @returns the invoices found (ids of other companies or unknown ids are simply absent)
   */
  @Transactional(Propagation.Mandatory)
  async lockForUpdate(companyId: string, invoiceIds: readonly string[]): Promise<LockedInvoice[]> {
    const rows = await this.txHost.tx.query<LockedInvoiceRow>(
      `SELECT id, number, currency, vat_breakdown, gross_total, credited_total, paid_total
         FROM invoices
        WHERE company_id = $1 AND id = ANY($2::uuid[])
        ORDER BY id
          FOR UPDATE`,
      [companyId, invoiceIds],
    );
    return rows.map((row) => ({
      id: row.id,
      number: row.number,
      currency: row.currency,
      vatBreakdown: row.vat_breakdown,
      grossTotal: Number(row.gross_total),
      creditedTotal: Number(row.credited_total),
      paidTotal: Number(row.paid_total),
    }));
  }

  /**
   * What the invoices' payments still `processing` hold back, by invoice id (absent: nothing).
   * Payments (libs/payments, which depends on invoicing, not the other way round) insert a
   * processing payment under the invoice's row lock and raise the paid total when it succeeds:
   * read under the same lock (`lockForUpdate` first), this sum stays true until COMMIT, so a
   * settlement can never take what a processing payment will need (`ck_invoices_paid`).
   */
  @Transactional(Propagation.Mandatory)
  async processingPaymentTotals(
    companyId: string,
    invoiceIds: readonly string[],
  ): Promise<Map<string, number>> {
    const rows = await this.txHost.tx.query<{ invoice_id: string; total: string }>(
      `SELECT invoice_id, sum(amount)::text AS total FROM payments
        WHERE company_id = $1 AND invoice_id = ANY($2::uuid[]) AND status = 'processing'
        GROUP BY invoice_id`,
      [companyId, invoiceIds],
    );
    return new Map(rows.map((row) => [row.invoice_id, Number(row.total)]));
  }

  /** Adds to the running totals (the only invoice columns the immutability trigger allows). */
  @Transactional(Propagation.Mandatory)
  async addToRunningTotals(
    companyId: string,
    invoiceId: string,
    amounts: { credited?: number; paid?: number },
  ): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE invoices SET credited_total = credited_total + $3, paid_total = paid_total + $4
        WHERE company_id = $1 AND id = $2`,
      [companyId, invoiceId, amounts.credited ?? 0, amounts.paid ?? 0],
    );
  }

  async findIdByOrder(companyId: string, orderId: string): Promise<string | null> {
    const rows = await this.txHost.tx.query<{ id: string }>(
      `SELECT id FROM invoices WHERE company_id = $1 AND order_id = $2`,
      [companyId, orderId],
    );
    return rows[0]?.id ?? null;
  }
}

/** Every member given narrows the list (AND). */
export interface InvoiceListFilter {
  orderId?: string;
  customerVatId?: string;
  /** Inclusive, `YYYY-MM-DD`. */
  issueDateFrom?: string;
  /** Inclusive, `YYYY-MM-DD`. */
  issueDateTo?: string;
  paymentStatus?: InvoicePaymentStatus;
  creditStatus?: InvoiceCreditStatus;
  /** Invoices whose metadata holds every one of these pairs. */
  metadata?: Metadata;
}

function invoiceConditions(filter: InvoiceListFilter): ListCondition[] {
  const conditions: ListCondition[] = [];
  const { orderId, customerVatId, issueDateFrom, issueDateTo, paymentStatus, creditStatus, metadata } =
    filter;
  // uq_invoices_company_order serves it.
  if (orderId !== undefined) conditions.push((bind) => `i.order_id = ${bind(orderId)}`);
  if (customerVatId !== undefined) conditions.push((bind) => `i.customer->>'vatId' = ${bind(customerVatId)}`);
  if (issueDateFrom !== undefined) conditions.push((bind) => `i.issue_date >= ${bind(issueDateFrom)}::date`);
  if (issueDateTo !== undefined) conditions.push((bind) => `i.issue_date <= ${bind(issueDateTo)}::date`);
  if (paymentStatus !== undefined)
    conditions.push((bind) => `${paymentStatusSql('i')} = ${bind(paymentStatus)}`);
  if (creditStatus !== undefined)
    conditions.push((bind) => `${creditStatusSql('i')} = ${bind(creditStatus)}`);
  // Containment, so ix_invoices_metadata (GIN, jsonb_path_ops) can serve it.
  if (metadata !== undefined && Object.keys(metadata).length > 0) {
    conditions.push((bind) => `i.metadata @> ${bind(JSON.stringify(metadata))}::jsonb`);
  }
  return conditions;
}
