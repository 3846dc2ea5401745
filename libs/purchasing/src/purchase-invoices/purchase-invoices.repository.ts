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
import type { SupplierDocument } from '../supplier-key';
import type { PurchaseInvoiceView } from './purchase-invoice.view';

interface PurchaseInvoiceRow extends StoredAmounts {
  id: string;
  document_number: string;
  supplier: PurchaseInvoiceView['supplier'];
  currency: string;
  issue_date: string;
  due_date: string | null;
  notes: string | null;
  metadata: Metadata;
  created_at: Date;
}

const SELECT_PURCHASE_INVOICE = `
  SELECT p.id, p.document_number, p.supplier, p.currency,
         to_char(p.issue_date, 'YYYY-MM-DD') AS issue_date,
         to_char(p.due_date, 'YYYY-MM-DD') AS due_date,
         p.notes, p.vat_breakdown, p.net_total, p.vat_total, p.gross_total, p.metadata, p.created_at,
         ${linesAggregateSql('purchase_invoice_lines', 'purchase_invoice_id', 'p')}
    FROM purchase_invoices p`;

/** Rebuilds the answer member by member: jsonb does not keep key order, the API does. */
function toView(row: PurchaseInvoiceRow): PurchaseInvoiceView {
  return {
    id: row.id,
    object: 'purchase_invoice',
    documentNumber: row.document_number,
    supplier: partyOf(row.supplier),
    currency: row.currency,
    issueDate: row.issue_date,
    dueDate: row.due_date,
    ...storedAmountsOf(row),
    notes: row.notes,
    metadata: metadataOf(row.metadata),
    createdAt: row.created_at.toISOString(),
  };
}

/** Keyset order (created_at, id): rows sharing a timestamp are never repeated or skipped. */
const PURCHASE_INVOICES = new TenantReader(
  'purchase_invoices',
  'p',
  SELECT_PURCHASE_INVOICE,
  ['created_at', 'id'],
  toView,
);

/** Every member given narrows the list (AND). */
export interface PurchaseInvoiceListFilter {
  supplierVatId?: string;
  documentNumber?: string;
  /** Inclusive, `YYYY-MM-DD`. */
  issueDateFrom?: string;
  /** Inclusive, `YYYY-MM-DD`. */
  issueDateTo?: string;
}

function purchaseInvoiceConditions(filter: PurchaseInvoiceListFilter): ListCondition[] {
  const { supplierVatId, documentNumber, issueDateFrom, issueDateTo } = filter;
  const conditions: ListCondition[] = [];
  if (supplierVatId !== undefined) conditions.push((bind) => `p.supplier->>'vatId' = ${bind(supplierVatId)}`);
  if (documentNumber !== undefined) conditions.push((bind) => `p.document_number = ${bind(documentNumber)}`);
  if (issueDateFrom !== undefined) conditions.push((bind) => `p.issue_date >= ${bind(issueDateFrom)}::date`);
  if (issueDateTo !== undefined) conditions.push((bind) => `p.issue_date <= ${bind(issueDateTo)}::date`);
  return conditions;
}

/** Purchase invoices of one company. Every method takes the company id first: no cross-tenant reads. */
@Injectable()
export class PurchaseInvoicesRepository {
  constructor(private readonly txHost: TransactionHost<PgTransactionalAdapter>) {}

  findById(companyId: string, purchaseInvoiceId: string): Promise<PurchaseInvoiceView | null> {
    return PURCHASE_INVOICES.findById(this.txHost.tx, companyId, purchaseInvoiceId);
  }

  /** A page in creation order (created_at, then id: rows sharing a timestamp are never repeated or skipped). */
  list(
    companyId: string,
    page: PageRequest,
    filter: PurchaseInvoiceListFilter = {},
  ): Promise<Page<PurchaseInvoiceView>> {
    return PURCHASE_INVOICES.list(this.txHost.tx, companyId, page, purchaseInvoiceConditions(filter));
  }

  /**
   * Takes the lock on (company, normalized document number) until the transaction ends, then
   * names the purchase invoice this supplier document duplicates, if any. The rule lives in
   * the database function `claim_supplier_document()`, which the insert trigger also runs.
   * @returns the id of the recorded duplicate, or null when this document may be recorded
   */
  @Transactional(Propagation.Mandatory)
  async claimDocument(companyId: string, document: SupplierDocument): Promise<string | null> {
    const rows = await this.txHost.tx.query<{ id: string | null }>(
      // One round trip: the function locks, then reads in a second statement with a fresh
      // snapshot, so it sees a document the previous holder of the lock committed. Holding the
      // lock to COMMIT makes a concurrent upload of this number wait, then see this one.
      `SELECT claim_supplier_document($1, $2, $3, $4) AS id`,
      [companyId, document.documentKey, document.vatId, document.nameKey],
    );
    return rows[0].id;
  }

  /**
   * Inserts a purchase invoice and its lines in one statement. Call {@link claimDocument} first
   * in the same transaction: the insert trigger refuses a duplicate with a unique violation.
   */
  @Transactional(Propagation.Mandatory)
  async insert(companyId: string, document: SupplierDocument, invoice: PurchaseInvoiceView): Promise<void> {
    await this.txHost.tx.query(
      `WITH invoice AS (
         INSERT INTO purchase_invoices (id, company_id, supplier, supplier_key, supplier_vat_id,
                                        supplier_name_key, document_number, document_key, currency,
                                        issue_date, due_date, notes, vat_breakdown, net_total,
                                        vat_total, gross_total, created_at, metadata)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
         RETURNING id
       )
       ${insertLinesSql('purchase_invoice_lines', 'purchase_invoice_id', 'invoice', 19)}`,
      [
        invoice.id,
        companyId,
        JSON.stringify(invoice.supplier),
        document.supplierKey,
        document.vatId,
        document.nameKey,
        invoice.documentNumber,
        document.documentKey,
        invoice.currency,
        invoice.issueDate,
        invoice.dueDate,
        invoice.notes,
        ...totalsParameters(invoice),
        invoice.createdAt,
        JSON.stringify(invoice.metadata),
        ...lineParameters(invoice.lines),
      ],
    );
  }
}
