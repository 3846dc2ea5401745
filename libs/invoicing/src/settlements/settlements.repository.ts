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
import type { SettlementSource, SettlementView } from './settlement.view';

interface SettlementRow {
  id: string;
  payout_id: string;
  currency: string;
  paid_at: Date;
  fee_amount: string;
  allocated_total: string;
  source: SettlementSource;
  created_at: Date;
  metadata: Metadata;
  allocations: Array<{ invoice_id: string; invoice_number: string; amount: string }>;
}

const SELECT_SETTLEMENT = `
  SELECT s.id, s.payout_id, s.currency, s.paid_at, s.fee_amount, s.allocated_total, s.source, s.metadata,
         s.created_at,
         -- invoice_id order: the order the handler locks and returns them in.
         (SELECT json_agg(json_build_object(
                   'invoice_id', a.invoice_id, 'invoice_number', i.number, 'amount', a.amount::text)
                 ORDER BY a.invoice_id)
            FROM settlement_allocations a
            -- Same company on both sides: a number from another tenant can never leak into a view.
            JOIN invoices i ON i.id = a.invoice_id AND i.company_id = a.company_id
           WHERE a.company_id = s.company_id AND a.settlement_id = s.id) AS allocations
    FROM settlements s`;

function toView(row: SettlementRow): SettlementView {
  const feeAmount = Number(row.fee_amount);
  const allocatedTotal = Number(row.allocated_total);
  return {
    id: row.id,
    object: 'settlement',
    payoutId: row.payout_id,
    currency: row.currency,
    paidAt: row.paid_at.toISOString(),
    feeAmount,
    allocatedTotal,
    netAmount: allocatedTotal - feeAmount,
    allocations: row.allocations.map((allocation) => ({
      invoiceId: allocation.invoice_id,
      invoiceNumber: allocation.invoice_number,
      amount: Number(allocation.amount),
    })),
    source: row.source,
    metadata: metadataOf(row.metadata),
    createdAt: row.created_at.toISOString(),
  };
}

/** Keyset order (created_at, id): id orders settlements created in the same millisecond. */
const SETTLEMENTS = new TenantReader('settlements', 's', SELECT_SETTLEMENT, ['created_at', 'id'], toView);

export interface SettlementListFilter {
  payoutId?: string;
}

/** Settlements of provider payouts, per company. Every method takes the company id first. */
@Injectable()
export class SettlementsRepository {
  constructor(private readonly txHost: TransactionHost<PgTransactionalAdapter>) {}

  findById(companyId: string, settlementId: string): Promise<SettlementView | null> {
    return SETTLEMENTS.findById(this.txHost.tx, companyId, settlementId);
  }

  /** A page in creation order (created_at, then id to order settlements created in the same millisecond). */
  list(
    companyId: string,
    page: PageRequest,
    filter: SettlementListFilter = {},
  ): Promise<Page<SettlementView>> {
    const { payoutId } = filter;
    // uq_settlements_company_payout serves it.
    return SETTLEMENTS.list(
      this.txHost.tx,
      companyId,
      page,
      payoutId === undefined ? [] : [(bind) => `s.payout_id = ${bind(payoutId)}`],
    );
  }

  /**
   * Inserts a settlement and its allocations in one statement. The caller holds the row locks
   * of the allocated invoices and has checked their outstanding amounts.
   * @returns false when the payout already has a settlement (nothing was inserted)
   */
  @Transactional(Propagation.Mandatory)
  async insert(companyId: string, settlement: SettlementView): Promise<boolean> {
    const rows = await this.txHost.tx.query<{ inserted: number }>(
      `WITH settlement AS (
         INSERT INTO settlements (id, company_id, payout_id, currency, paid_at, fee_amount, allocated_total,
                                  created_at, source, metadata)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $11, $12)
         -- One per payout, for ever: a concurrent twin waits here, inserts nothing and can name the winner.
         ON CONFLICT (company_id, payout_id) DO NOTHING
         RETURNING id
       ), allocations AS (
         INSERT INTO settlement_allocations (settlement_id, company_id, invoice_id, amount)
         SELECT settlement.id, $2, a.invoice_id, a.amount
           FROM settlement, unnest($9::uuid[], $10::bigint[]) AS a(invoice_id, amount)
       )
       SELECT count(*)::int AS inserted FROM settlement`,
      [
        settlement.id,
        companyId,
        settlement.payoutId,
        settlement.currency,
        settlement.paidAt,
        settlement.feeAmount,
        settlement.allocatedTotal,
        settlement.createdAt,
        settlement.allocations.map((allocation) => allocation.invoiceId),
        settlement.allocations.map((allocation) => allocation.amount),
        settlement.source,
        JSON.stringify(settlement.metadata),
      ],
    );
    return rows[0].inserted === 1;
  }

  async importedPaidBetween(companyId: string, from: Date, to: Date): Promise<SettlementView[]> {
    const rows = await this.txHost.tx.query<SettlementRow>(
      `${SELECT_SETTLEMENT}
        WHERE s.company_id = $1 AND s.source = 'provider' AND s.paid_at >= $2 AND s.paid_at < $3
        ORDER BY s.paid_at, s.id`,
      [companyId, from, to],
    );
    return rows.map(toView);
  }

  async findIdByPayout(companyId: string, payoutId: string): Promise<string | null> {
    const rows = await this.txHost.tx.query<{ id: string }>(
      `SELECT id FROM settlements WHERE company_id = $1 AND payout_id = $2`,
      [companyId, payoutId],
    );
    return rows[0]?.id ?? null;
  }
}
