import { Injectable, Logger } from '@nestjs/common';
import { TransactionHost, type PgTransactionalAdapter } from '@ledgerkey/database';
import { PayoutAlreadySettledError, RecordSettlementHandler, SettlementQueries } from '@ledgerkey/invoicing';
import type { PaymentView } from '../payments/payment.view';
import { PaymentsRepository } from '../payments/payments.repository';
import type { ProviderPayout } from '../provider-objects';

/**
 * How importing a payout ended: `imported` (a settlement now books it), `settled_before` (a
 * settlement of the payout existed: imported before, or pushed for charges that are not payments
 * here), `refused` (`claim` said the caller must not apply it, e.g. its event is recorded already),
 * `waiting` (some of its charges have no succeeded payment here yet: nothing written),
 * `rejected` (it cannot be booked as the provider reports it: another currency than its invoices,
 * a fee above its total, nothing paid out; nothing written) or `pushed_twice` (a settlement pushed
 * with POST /v1/settlements/create books a payout of payments recorded here: they raised the paid
 * totals already, so it counts that money twice; nothing written, a person must look).
 */
export type PayoutImportResult =
  | { kind: 'imported' | 'settled_before' | 'refused' }
  | { kind: 'waiting'; chargeIds: string[] }
  | { kind: 'rejected' | 'pushed_twice'; reason: string; settlementId?: string };

/**
 * A provider payout as a settlement, through the same use case as POST /v1/settlements/create
 * (`RecordSettlementHandler.importPayout`, payoutId the business key): each charge it pays out is
 * mapped to its succeeded payment's invoice. Shared by the `payout.paid` event and reconciliation.
 */
@Injectable()
export class ImportPayoutHandler {
  private readonly logger = new Logger('Payouts');

  constructor(
    private readonly txHost: TransactionHost<PgTransactionalAdapter>,
    private readonly payments: PaymentsRepository,
    private readonly settlements: RecordSettlementHandler,
    private readonly settlementQueries: SettlementQueries,
  ) {}

  /**
   * In a transaction of its own.
   * @param claim runs first in that transaction once the payout's outcome is known (not `waiting`),
   *   with the reason when it is not booked (`rejected`, `pushed_twice`) or null; false → book nothing
   */
  import(
    companyId: string,
    provider: string,
    payout: ProviderPayout,
    claim: (reason: string | null) => Promise<boolean> = () => Promise.resolve(true),
  ): Promise<PayoutImportResult> {
    return this.txHost.withTransaction(async (): Promise<PayoutImportResult> => {
      // A charge paid out with nothing is no allocation (a settlement allocates positive amounts).
      const charges = payout.charges.filter((charge) => charge.amount > 0);
      const chargeIds = charges.map((charge) => charge.id);
      const paid = await this.payments.findByChargeIds(companyId, provider, chargeIds);
      const byCharge = new Map<string | null, PaymentView>(
        paid
          .filter((payment) => payment.status === 'succeeded')
          .map((payment) => [payment.providerChargeId, payment]),
      );
      const existing = await this.settlementQueries.findByPayout(companyId, payout.id);
      if (existing?.source === 'api') {
        if (paid.length === 0) return (await claim(null)) ? { kind: 'settled_before' } : { kind: 'refused' };
        const reason =
          `settlement ${existing.id} pushed with POST /v1/settlements/create books payout ${payout.id}, ` +
          `which pays out payments recorded here (${paid[0].id}${paid.length > 1 ? ', …' : ''}): ` +
          'their paid totals count twice';
        this.logger.warn(`company ${companyId}: ${reason}`);
        return (await claim(reason))
          ? { kind: 'pushed_twice', reason, settlementId: existing.id }
          : { kind: 'refused' };
      }
      if (existing !== null) return (await claim(null)) ? { kind: 'settled_before' } : { kind: 'refused' };
      const waiting = chargeIds.filter((id) => !byCharge.has(id));
      if (waiting.length > 0) return { kind: 'waiting', chargeIds: waiting };
      const rejection = payoutRejection(payout, charges, byCharge);
      if (rejection !== null) {
        this.logger.warn(`company ${companyId}: payout ${payout.id} not booked: ${rejection}`);
        return (await claim(rejection)) ? { kind: 'rejected', reason: rejection } : { kind: 'refused' };
      }
      if (!(await claim(null))) return { kind: 'refused' };
      try {
        await this.settlements.importPayout(companyId, {
          payoutId: payout.id,
          currency: payout.currency,
          paidAt: payout.paidAt,
          feeAmount: payout.feeAmount,
          allocations: charges.map((charge) => ({
            invoiceId: (byCharge.get(charge.id) as PaymentView).invoiceId,
            amount: charge.amount,
          })),
        });
        return { kind: 'imported' };
      } catch (error) {
        if (!(error instanceof PayoutAlreadySettledError)) throw error;
        // Settled by a concurrent push or import a moment ago: booked once (reconciliation compares it).
        this.logger.log(`payout ${payout.id} of company ${companyId} is settled already; nothing booked`);
        return { kind: 'settled_before' };
      }
    });
  }
}

/** Why a payout whose charges are all payments here cannot be booked as reported, or null. */
function payoutRejection(
  payout: ProviderPayout,
  charges: ProviderPayout['charges'],
  byCharge: ReadonlyMap<string | null, PaymentView>,
): string | null {
  if (charges.length === 0) return `payout ${payout.id} pays out no charge with an amount`;
  const currency = payout.currency.toUpperCase();
  const other = charges
    .map((charge) => byCharge.get(charge.id) as PaymentView)
    .find((payment) => payment.currency !== currency);
  if (other !== undefined) {
    return `payout ${payout.id} is in ${currency}, payment ${other.id} (invoice ${other.invoiceId}) in ${other.currency}`;
  }
  const total = charges.reduce((sum, charge) => sum + charge.amount, 0);
  if (payout.feeAmount > total) {
    return `payout ${payout.id} has a fee of ${payout.feeAmount} above its total of ${total} ${currency}`;
  }
  return null;
}
