import { Injectable } from '@nestjs/common';
import {
  Propagation,
  Transactional,
  TransactionHost,
  type PgTransactionalAdapter,
} from '@ledgerkey/database';
import type { RefundView } from './refund.view';

interface RefundRow {
  id: string;
  payment_id: string;
  invoice_id: string;
  amount: string;
  currency: string;
  provider_refund_id: string;
  provider_charge_id: string;
  refunded_at: Date;
  created_at: Date;
}

const COLUMNS = `id, payment_id, invoice_id, amount, currency, provider_refund_id, provider_charge_id,
                 refunded_at, created_at`;

function toView(row: RefundRow): RefundView {
  return {
    id: row.id,
    object: 'refund',
    paymentId: row.payment_id,
    invoiceId: row.invoice_id,
    amount: Number(row.amount),
    currency: row.currency,
    providerRefundId: row.provider_refund_id,
    providerChargeId: row.provider_charge_id,
    refundedAt: row.refunded_at.toISOString(),
    createdAt: row.created_at.toISOString(),
  };
}

/** Refunds of payments, per company. Every method takes the company id first. */
@Injectable()
export class RefundsRepository {
  constructor(private readonly txHost: TransactionHost<PgTransactionalAdapter>) {}

  /**
   * Books a provider refund once.
   * @returns false when the provider refund is booked already (nothing was inserted)
   */
  @Transactional(Propagation.Mandatory)
  async insert(companyId: string, provider: string, refund: RefundView): Promise<boolean> {
    const rows = await this.txHost.tx.query<{ id: string }>(
      `INSERT INTO payment_refunds (company_id, id, payment_id, invoice_id, amount, currency, provider,
                                    provider_refund_id, provider_charge_id, refunded_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       -- One booking per provider refund: a concurrent twin waits here and inserts nothing.
       ON CONFLICT (company_id, provider, provider_refund_id) DO NOTHING
       RETURNING id`,
      [
        companyId,
        refund.id,
        refund.paymentId,
        refund.invoiceId,
        refund.amount,
        refund.currency,
        provider,
        refund.providerRefundId,
        refund.providerChargeId,
        refund.refundedAt,
        refund.createdAt,
      ],
    );
    return rows.length === 1;
  }

  /** The refunds of these payments, oldest first. */
  async ofPayments(companyId: string, paymentIds: readonly string[]): Promise<RefundView[]> {
    const rows = await this.txHost.tx.query<RefundRow>(
      `SELECT ${COLUMNS} FROM payment_refunds
        WHERE company_id = $1 AND payment_id = ANY($2::uuid[]) ORDER BY created_at, id`,
      [companyId, paymentIds],
    );
    return rows.map(toView);
  }
}
