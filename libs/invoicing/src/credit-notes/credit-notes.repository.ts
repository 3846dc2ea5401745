import { Injectable } from '@nestjs/common';
import {
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
import type { CreditedAtRate } from '../issue-credit-note/credit-limits';
import type { CreditNoteView } from './credit-note.view';

interface CreditNoteRow extends StoredAmounts {
  id: string;
  number: string;
  series: string;
  sequence: string;
  invoice_id: string;
  invoice_number: string;
  reason: CreditNoteView['reason'];
  memo: string | null;
  currency: string;
  seller: CompanyProfile;
  metadata: Metadata;
  created_at: Date;
}

const SELECT_CREDIT_NOTE = `
  SELECT c.id, c.number, c.series, c.sequence, c.invoice_id, i.number AS invoice_number, c.reason,
         c.memo, c.currency, c.seller, c.vat_breakdown, c.net_total, c.vat_total, c.gross_total, c.metadata,
         c.created_at,
         ${linesAggregateSql('credit_note_lines', 'credit_note_id', 'c')}
    FROM credit_notes c JOIN invoices i ON i.company_id = c.company_id AND i.id = c.invoice_id`;

function toView(row: CreditNoteRow): CreditNoteView {
  return {
    id: row.id,
    object: 'credit_note',
    number: row.number,
    series: row.series,
    sequence: Number(row.sequence),
    invoiceId: row.invoice_id,
    invoiceNumber: row.invoice_number,
    reason: row.reason,
    memo: row.memo,
    currency: row.currency,
    seller: companyProfileOf(row.seller, row.seller.address.countryCode),
    ...storedAmountsOf(row),
    metadata: metadataOf(row.metadata),
    createdAt: row.created_at.toISOString(),
  };
}

/** Keyset order (series, sequence): number order, unique. */
const CREDIT_NOTES = new TenantReader(
  'credit_notes',
  'c',
  SELECT_CREDIT_NOTE,
  ['series', 'sequence'],
  toView,
);

export interface CreditNoteListFilter {
  invoiceId?: string;
}

/** Credit notes of one company. Every method takes the company id first. */
@Injectable()
export class CreditNotesRepository {
  constructor(private readonly txHost: TransactionHost<PgTransactionalAdapter>) {}

  findById(companyId: string, creditNoteId: string): Promise<CreditNoteView | null> {
    return CREDIT_NOTES.findById(this.txHost.tx, companyId, creditNoteId);
  }

  /** A page in number order (or its reverse), of one invoice's credit notes when `invoiceId` is given. */
  list(
    companyId: string,
    page: PageRequest,
    filter: CreditNoteListFilter = {},
  ): Promise<Page<CreditNoteView>> {
    const { invoiceId } = filter;
    return CREDIT_NOTES.list(
      this.txHost.tx,
      companyId,
      page,
      invoiceId === undefined ? [] : [(bind) => `c.invoice_id = ${bind(invoiceId)}::uuid`],
    );
  }

  /**
   * Net and VAT already credited on an invoice, per canonical VAT rate. Callers hold the
   * invoice's row lock, so no credit note for it can commit in between.
   */
  @Transactional(Propagation.Mandatory)
  async creditedByRate(companyId: string, invoiceId: string): Promise<Map<string, CreditedAtRate>> {
    const rows = await this.txHost.tx.query<{ vat_rate: string; net: string; vat: string }>(
      `SELECT b->>'vatRate' AS vat_rate, sum((b->>'netAmount')::bigint)::text AS net,
              sum((b->>'vatAmount')::bigint)::text AS vat
         FROM credit_notes c, jsonb_array_elements(c.vat_breakdown) AS b
        WHERE c.company_id = $1 AND c.invoice_id = $2
        GROUP BY b->>'vatRate'`,
      [companyId, invoiceId],
    );
    return new Map(rows.map((row) => [row.vat_rate, { net: Number(row.net), vat: Number(row.vat) }]));
  }

  /**
   * Inserts an issued credit note and its lines in one statement; the seller is the company's
   * profile as this statement sees it (`company_seller`), snapshotted for ever.
   * @returns the seller snapshot stored with it
   */
  @Transactional(Propagation.Mandatory)
  async insert(companyId: string, note: Omit<CreditNoteView, 'seller'>): Promise<CompanyProfile> {
    const [row] = await this.txHost.tx.query<{ seller: CompanyProfile }>(
      `WITH note AS (
         INSERT INTO credit_notes (id, company_id, invoice_id, series, sequence, number, reason, memo,
                                   currency, vat_breakdown, net_total, vat_total, gross_total, created_at,
                                   seller, metadata)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, ${sellerSnapshotSql('$2')}, $15)
         RETURNING id, seller
       ), lines AS (
         ${insertLinesSql('credit_note_lines', 'credit_note_id', 'note', 16)}
       )
       SELECT seller FROM note`,
      [
        note.id,
        companyId,
        note.invoiceId,
        note.series,
        note.sequence,
        note.number,
        note.reason,
        note.memo,
        note.currency,
        ...totalsParameters(note),
        note.createdAt,
        JSON.stringify(note.metadata),
        ...lineParameters(note.lines),
      ],
    );
    return storedProfileOf(row.seller);
  }
}
