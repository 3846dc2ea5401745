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
import type { PaymentStatus, PaymentView } from './payment.view';

interface PaymentRow {
  id: string;
  invoice_id: string;
  amount: string;
  currency: string;
  status: PaymentStatus;
  failure_code: string | null;
  provider: string;
  provider_reference: string;
  provider_charge_id: string | null;
  payment_method: string;
  metadata: Metadata;
  created_at: Date;
  updated_at: Date;
}

/** How a payment ended, as the provider said. */
export type PaymentOutcome =
  | { status: 'succeeded'; chargeId: string }
  /** A decline (with the charge), or a refusal of the request (no charge). */
  | { status: 'failed'; failureCode: string; chargeId: string | null };

/** A payment with what is needed to (re)send its charge. */
export interface StoredPayment {
  payment: PaymentView;
  paymentMethod: string;
}

const PAYMENT_COLUMNS = `p.id, p.invoice_id, p.amount, p.currency, p.status, p.failure_code, p.provider,
  p.provider_reference, p.provider_charge_id, p.payment_method, p.metadata, p.created_at, p.updated_at`;
const SELECT_PAYMENT = `SELECT ${PAYMENT_COLUMNS} FROM payments p`;

function toView(row: PaymentRow): PaymentView {
  return {
    id: row.id,
    object: 'payment',
    invoiceId: row.invoice_id,
    amount: Number(row.amount),
    currency: row.currency,
    status: row.status,
    failureCode: row.failure_code,
    provider: row.provider,
    providerReference: row.provider_reference,
    providerChargeId: row.provider_charge_id,
    metadata: metadataOf(row.metadata),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Keyset order (created_at, id): id orders payments created in the same millisecond. */
const PAYMENTS = new TenantReader('payments', 'p', SELECT_PAYMENT, ['created_at', 'id'], toView);

/** Every member given narrows the list (AND). */
export interface PaymentListFilter {
  invoiceId?: string;
  status?: PaymentStatus;
}

/** Payments of one company. Every method takes the company id first. */
@Injectable()
export class PaymentsRepository {
  constructor(private readonly txHost: TransactionHost<PgTransactionalAdapter>) {}

  findById(companyId: string, paymentId: string): Promise<PaymentView | null> {
    return PAYMENTS.findById(this.txHost.tx, companyId, paymentId);
  }

  /** A page in creation order (or its reverse) of the payments matching `filter`. */
  list(companyId: string, page: PageRequest, filter: PaymentListFilter = {}): Promise<Page<PaymentView>> {
    const { invoiceId, status } = filter;
    const conditions: ListCondition[] = [];
    // ix_payments_company_invoice serves the filter and the order.
    if (invoiceId !== undefined) conditions.push((bind) => `p.invoice_id = ${bind(invoiceId)}::uuid`);
    if (status !== undefined) conditions.push((bind) => `p.status = ${bind(status)}`);
    return PAYMENTS.list(this.txHost.tx, companyId, page, conditions);
  }

  /**
   * The processing payment the key started, or null. `uq_payments_company_processing_key`: a key
   * has at most one.
   */
  async findProcessingByKey(companyId: string, idempotencyKey: string): Promise<StoredPayment | null> {
    const rows = await this.txHost.tx.query<PaymentRow>(
      `${SELECT_PAYMENT} WHERE p.company_id = $1 AND p.idempotency_key = $2 AND p.status = 'processing'`,
      [companyId, idempotencyKey],
    );
    return rows[0] ? { payment: toView(rows[0]), paymentMethod: rows[0].payment_method } : null;
  }

  /**
   * The payment with this provider reference, with the key that started it (the reference is ours:
   * `uq_payments_company_provider_reference`).
   */
  async findByReference(
    companyId: string,
    provider: string,
    reference: string,
  ): Promise<{ payment: PaymentView; idempotencyKey: string } | null> {
    const rows = await this.txHost.tx.query<PaymentRow & { idempotency_key: string }>(
      `${SELECT_PAYMENT.replace('p.updated_at', 'p.updated_at, p.idempotency_key')}
        WHERE p.company_id = $1 AND p.provider = $2 AND p.provider_reference = $3`,
      [companyId, provider, reference],
    );
    return rows[0] ? { payment: toView(rows[0]), idempotencyKey: rows[0].idempotency_key } : null;
  }

  /** The payments of these provider charges (succeeded or failed: only those know their charge). */
  async findByChargeIds(
    companyId: string,
    provider: string,
    chargeIds: readonly string[],
  ): Promise<PaymentView[]> {
    const rows = await this.txHost.tx.query<PaymentRow>(
      `${SELECT_PAYMENT} WHERE p.company_id = $1 AND p.provider = $2 AND p.provider_charge_id = ANY($3::text[])`,
      [companyId, provider, chargeIds],
    );
    return rows.map(toView);
  }

  /** Payments created in [from, to), oldest first (reconciliation). */
  async createdBetween(companyId: string, provider: string, from: Date, to: Date): Promise<PaymentView[]> {
    const rows = await this.txHost.tx.query<PaymentRow>(
      `${SELECT_PAYMENT}
        WHERE p.company_id = $1 AND p.provider = $2 AND p.created_at >= $3 AND p.created_at < $4
        ORDER BY p.created_at, p.id`,
      [companyId, provider, from, to],
    );
    return rows.map(toView);
  }

  /**
   * What the invoice's processing payments hold back from its outstanding amount. Read under the
   * invoice's row lock: every payment of the invoice is inserted, and succeeds, under that lock.
   */
  @Transactional(Propagation.Mandatory)
  async processingTotal(companyId: string, invoiceId: string): Promise<number> {
    const [row] = await this.txHost.tx.query<{ total: string }>(
      `SELECT coalesce(sum(amount), 0)::text AS total FROM payments
        WHERE company_id = $1 AND invoice_id = $2 AND status = 'processing'`,
      [companyId, invoiceId],
    );
    return Number(row.total);
  }

  /** Inserts a processing payment, in the transaction that commits its key `in_progress`. */
  @Transactional(Propagation.Mandatory)
  async insert(
    companyId: string,
    payment: PaymentView,
    paymentMethod: string,
    idempotencyKey: string,
  ): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO payments (company_id, id, invoice_id, amount, currency, status, failure_code,
                             payment_method, provider, provider_reference, provider_charge_id,
                             idempotency_key, created_at, updated_at, metadata)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
      [
        companyId,
        payment.id,
        payment.invoiceId,
        payment.amount,
        payment.currency,
        payment.status,
        payment.failureCode,
        paymentMethod,
        payment.provider,
        payment.providerReference,
        payment.providerChargeId,
        idempotencyKey,
        payment.createdAt,
        payment.updatedAt,
        JSON.stringify(payment.metadata),
      ],
    );
  }

  /**
   * processing → succeeded | failed (the only change `trg_payments_guard` allows).
   * @returns the payment as it is now, or null when it was not processing any more
   */
  @Transactional(Propagation.Mandatory)
  async recordOutcome(
    companyId: string,
    paymentId: string,
    outcome: PaymentOutcome,
    at: Date,
  ): Promise<PaymentView | null> {
    const rows = await this.txHost.tx.query<PaymentRow>(
      `WITH changed AS (
         UPDATE payments
            SET status = $3, failure_code = $4, provider_charge_id = $5,
                -- Clocks of two processes may disagree by a little: never before its creation.
                updated_at = greatest($6, created_at)
          WHERE company_id = $1 AND id = $2 AND status = 'processing'
          RETURNING *)
       SELECT ${PAYMENT_COLUMNS} FROM changed p`,
      [
        companyId,
        paymentId,
        outcome.status,
        outcome.status === 'failed' ? outcome.failureCode : null,
        outcome.chargeId,
        at,
      ],
    );
    return rows[0] ? toView(rows[0]) : null;
  }
}
