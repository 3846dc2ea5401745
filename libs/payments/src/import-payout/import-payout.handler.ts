import { Injectable, Logger } from '@nestjs/common';
import { TransactionHost, type TypeOrmTransactionalAdapter } from '@ledgerkey/database';
import { PayoutAlreadySettledError, RecordSettlementHandler } from '@ledgerkey/invoicing';
import type { PaymentView } from '../payments/payment.view';
import { PaymentsRepository } from '../payments/payments.repository';
import type { ProviderPayout } from '../provider-objects';

/**
 * How importing a payout ended: `imported` (a settlement now books it), `settled_before` (a
 * settlement of the payout existed: pushed, or imported before), `refused` (`claim` said the caller
 * must not apply it, e.g. its event is recorded already), or `waiting` (some of its charges have no
 * succeeded payment here yet: nothing written).
 */
export type PayoutImportResult =
  { kind: 'imported' | 'settled_before' | 'refused' } | { kind: 'waiting'; chargeIds: string[] };

/**
 * A provider payout as a settlement, through the same use case as POST /v1/settlements/create
 * (`RecordSettlementHandler.importPayout`, payoutId the business key): each charge it pays out is
 * mapped to its succeeded payment's invoice. Shared by the `payout.paid` event and reconciliation.
 */
@Injectable()
export class ImportPayoutHandler {
  private readonly logger = new Logger('Payouts');

  constructor(
    private readonly txHost: TransactionHost<TypeOrmTransactionalAdapter>,
    private readonly payments: PaymentsRepository,
    private readonly settlements: RecordSettlementHandler,
  ) {}

  /**
   * In a transaction of its own.
   * @param claim runs first in that transaction once the payout can be booked; false → book nothing
   */
  import(
    companyId: string,
    provider: string,
    payout: ProviderPayout,
    claim: () => Promise<boolean> = () => Promise.resolve(true),
  ): Promise<PayoutImportResult> {
    return this.txHost.withTransaction(async (): Promise<PayoutImportResult> => {
      const chargeIds = payout.charges.map((charge) => charge.id);
      const paid = await this.payments.findByChargeIds(companyId, provider, chargeIds);
      const byCharge = new Map<string | null, PaymentView>(
        paid
          .filter((payment) => payment.status === 'succeeded')
          .map((payment) => [payment.providerChargeId, payment]),
      );
      const waiting = chargeIds.filter((id) => !byCharge.has(id));
      if (waiting.length > 0) return { kind: 'waiting', chargeIds: waiting };
      if (!(await claim())) return { kind: 'refused' };
      try {
        await this.settlements.importPayout(companyId, {
          payoutId: payout.id,
          currency: payout.currency,
          paidAt: payout.paidAt,
          feeAmount: payout.feeAmount,
          allocations: payout.charges.map((charge) => ({
            invoiceId: (byCharge.get(charge.id) as PaymentView).invoiceId,
            amount: charge.amount,
          })),
        });
        return { kind: 'imported' };
      } catch (error) {
        if (!(error instanceof PayoutAlreadySettledError)) throw error;
        // Pushed with POST /v1/settlements/create, or imported before: booked once.
        this.logger.log(`payout ${payout.id} of company ${companyId} is settled already; nothing booked`);
        return { kind: 'settled_before' };
      }
    });
  }
}
