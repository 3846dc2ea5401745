import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { TransactionHost, type PgTransactionalAdapter } from '@ledgerkey/database';
import type {
  EffectResult,
  ExternalEffect,
  IdempotencyKeyRef,
  IdempotentOperation,
} from '@ledgerkey/idempotency';
import { SettlementQueries } from '@ledgerkey/invoicing';
import { BookRefundsHandler, refundExcess } from '../book-refunds/book-refunds.handler';
import { CompletePaymentHandler } from '../complete-payment/complete-payment.handler';
import { ImportPayoutHandler } from '../import-payout/import-payout.handler';
import type { PaymentProvider } from '../payment-provider';
import {
  PaymentProviderAmbiguousReferenceError,
  PaymentProviderRequestError,
  PaymentProviderUnavailableError,
} from '../payment-provider.errors';
import { PAYMENTS_OPTIONS, PAYMENT_PROVIDER, type PaymentsOptions } from '../payments-options';
import { PaymentProviderNotConfiguredError } from '../payments.errors';
import type { PaymentView } from '../payments/payment.view';
import { PaymentsRepository } from '../payments/payments.repository';
import type { ProviderCharge, ProviderPayout } from '../provider-objects';
import { RefundsRepository } from '../refunds/refunds.repository';
import type { ReconciliationRange } from './create-reconciliation-run.dto';
import type {
  DiscrepancyView,
  ReconciliationRunView,
  ReconciliationSummaryView,
} from './reconciliation-run.view';
import { ReconciliationRunsRepository } from './reconciliation-runs.repository';

/** The idempotent operation `POST /v1/reconciliation/runs/create`, shared by its route and the schedule. */
export const CREATE_RECONCILIATION_RUN_OPERATION: IdempotentOperation<ReconciliationRunView> = {
  operation: 'reconciliation.runs.create',
  status: 201,
  location: (run) => `/v1/reconciliation/runs/${run.id}`,
};

type Finding = Omit<DiscrepancyView, 'firstSeenAt'>;

interface Comparison {
  counts: Pick<ReconciliationSummaryView, 'charges' | 'payouts' | 'payments'>;
  discrepancies: Finding[];
}

/**
 * A reconciliation run: the provider's charges (with their refunds) and payouts in a range against
 * the local payments, refunds and settlements, run by the idempotency protocol as an external
 * effect (the provider is read outside any transaction):
 * - prepare: the run is stored `running` with its key;
 * - perform: every charge and payout the provider lists in the range, and every local payment
 *   created in it, are compared. What is safe to fix is fixed through the same paths the provider's
 *   events take — a processing payment whose charge succeeded or failed is completed
 *   (`CompletePaymentHandler`), a refund not booked is booked (`BookRefundsHandler`), a payout not
 *   settled is imported (`ImportPayoutHandler`) — and reported `auto_resolved`; everything else is
 *   `needs_review`. When the provider cannot be read, the outcome is unknown: `202`, and the key
 *   (or the next scheduled run) resumes it;
 * - settle: the discrepancies are stored with the completed run.
 */
@Injectable()
export class RunReconciliationHandler {
  private readonly logger = new Logger('Reconciliation');

  constructor(
    private readonly txHost: TransactionHost<PgTransactionalAdapter>,
    private readonly runs: ReconciliationRunsRepository,
    private readonly payments: PaymentsRepository,
    private readonly refunds: RefundsRepository,
    private readonly settlements: SettlementQueries,
    private readonly completePayment: CompletePaymentHandler,
    private readonly bookRefunds: BookRefundsHandler,
    private readonly importPayout: ImportPayoutHandler,
    @Inject(PAYMENT_PROVIDER) private readonly provider: PaymentProvider | null,
    @Inject(PAYMENTS_OPTIONS) private readonly options: PaymentsOptions,
  ) {}

  /** The run a request (or the schedule) asks for, for `IdempotentExecutor.executeExternal`. */
  forRange(
    companyId: string,
    range: ReconciliationRange,
    trigger: 'api' | 'schedule',
  ): ExternalEffect<ReconciliationRunView, Comparison, ReconciliationRunView> {
    return {
      // Reads page through the provider; each page is one call bounded by the provider timeout.
      leaseSeconds: Math.max(120, this.options.config.leaseSeconds),
      retryAfterSeconds: 5,
      prepare: (ref) => this.prepare(companyId, range, trigger, ref),
      load: async (ref) => {
        const run = await this.runs.findRunningByKey(ref.tenantId, ref.key);
        if (run === null)
          throw new Error(`key ${ref.key} is unfinished but has no running reconciliation run`);
        return run;
      },
      perform: (run) => this.perform(companyId, run),
      settle: async (run, comparison) => {
        const now = new Date();
        if (
          !(await this.runs.complete(companyId, run.id, comparison.counts, comparison.discrepancies, now))
        ) {
          throw new Error(`reconciliation run ${run.id} is no longer running`);
        }
        return (await this.runs.findById(companyId, run.id)) as ReconciliationRunView;
      },
      pending: (run) => run,
    };
  }

  private async prepare(
    companyId: string,
    range: ReconciliationRange,
    trigger: 'api' | 'schedule',
    ref: IdempotencyKeyRef,
  ): Promise<ReconciliationRunView> {
    if (this.provider === null) throw new PaymentProviderNotConfiguredError();
    const run: ReconciliationRunView = {
      id: randomUUID(),
      object: 'reconciliation_run',
      provider: this.provider.name,
      from: range.from,
      to: range.to,
      status: 'running',
      trigger,
      summary: null,
      discrepancies: [],
      createdAt: new Date().toISOString(),
      completedAt: null,
    };
    await this.runs.insert(companyId, run, ref.key);
    return run;
  }

  private async perform(companyId: string, run: ReconciliationRunView): Promise<EffectResult<Comparison>> {
    try {
      return { known: true, outcome: await this.compare(companyId, run) };
    } catch (error) {
      if (
        error instanceof PaymentProviderUnavailableError ||
        error instanceof PaymentProviderRequestError ||
        error instanceof PaymentProviderAmbiguousReferenceError
      ) {
        this.logger.warn(`reconciliation run ${run.id}: the provider could not be read: ${error.message}`);
        return { known: false, reason: error.message };
      }
      throw error;
    }
  }

  private async compare(companyId: string, run: ReconciliationRunView): Promise<Comparison> {
    const provider = this.provider as PaymentProvider;
    const range = { createdFrom: new Date(run.from), createdTo: new Date(run.to), companyId };
    const findings: Finding[] = [];
    const seenReferences = new Set<string>();
    let charges = 0;
    for await (const charge of provider.listCharges(range)) {
      charges += 1;
      seenReferences.add(charge.reference);
      await this.compareCharge(companyId, provider.name, charge, findings);
    }
    const local = await this.payments.createdBetween(
      companyId,
      provider.name,
      range.createdFrom,
      range.createdTo,
    );
    for (const payment of local) {
      if (seenReferences.has(payment.providerReference)) continue;
      // Made near an edge of the range (the provider's clock is its own): look it up by reference.
      const charge = await provider.findChargeByReference(payment.providerReference);
      if (charge !== null) {
        await this.compareCharge(companyId, provider.name, charge, findings);
      } else if (
        payment.status === 'succeeded' ||
        (payment.status === 'failed' && payment.providerChargeId)
      ) {
        findings.push({
          kind: 'missing_at_provider',
          resolution: 'needs_review',
          objectType: 'charge',
          providerObjectId: payment.providerChargeId,
          localId: payment.id,
          providerValue: null,
          localValue: `${payment.amount} ${payment.currency} ${payment.status}`,
          detail: `payment ${payment.id} ${payment.status} with charge ${payment.providerChargeId}, which the provider does not have`,
        });
      }
      // A processing payment without a charge is the recovery's: it charges or fails it.
    }
    let payouts = 0;
    const seenPayouts = new Set<string>();
    for await (const payout of provider.listPayouts(range)) {
      payouts += 1;
      seenPayouts.add(payout.id);
      await this.comparePayout(companyId, provider.name, payout, findings);
    }
    for (const settlement of await this.settlements.importedPaidBetween(
      companyId,
      range.createdFrom,
      range.createdTo,
    )) {
      if (seenPayouts.has(settlement.payoutId)) continue;
      findings.push({
        kind: 'missing_at_provider',
        resolution: 'needs_review',
        objectType: 'payout',
        providerObjectId: settlement.payoutId,
        localId: settlement.id,
        providerValue: null,
        localValue: `${settlement.allocatedTotal} ${settlement.currency} fee ${settlement.feeAmount}`,
        detail: `settlement ${settlement.id} books payout ${settlement.payoutId}, which the provider does not list`,
      });
    }
    return { counts: { charges, payouts, payments: local.length }, discrepancies: findings };
  }

  private async compareCharge(
    companyId: string,
    provider: string,
    charge: ProviderCharge,
    findings: Finding[],
  ): Promise<void> {
    const providerValue = `${charge.amount} ${charge.currency} ${charge.status}`;
    const found = await this.payments.findByReference(companyId, provider, charge.reference);
    if (found === null) {
      findings.push({
        kind: 'missing_locally',
        resolution: 'needs_review',
        objectType: 'charge',
        providerObjectId: charge.id,
        localId: null,
        providerValue,
        localValue: null,
        detail: `charge ${charge.id} (reference ${charge.reference}) has no payment here`,
      });
      return;
    }
    let payment = found.payment;
    const base = {
      objectType: 'charge' as const,
      providerObjectId: charge.id,
      localId: payment.id,
      providerValue,
    };
    if (payment.amount !== charge.amount || payment.currency !== charge.currency.toUpperCase()) {
      findings.push({
        ...base,
        kind: 'amount_mismatch',
        resolution: 'needs_review',
        localValue: `${payment.amount} ${payment.currency} ${payment.status}`,
        detail: `charge ${charge.id} is ${charge.amount} ${charge.currency}, payment ${payment.id} ${payment.amount} ${payment.currency}`,
      });
      return;
    }
    if (payment.status === 'processing') {
      const result = await this.completePayment.withCharge(companyId, found, charge, async (settled) => {
        await this.bookRefunds.bookMissing(companyId, settled, charge);
      });
      if (result === 'completed' || result === 'held') {
        findings.push({
          ...base,
          kind: 'status_mismatch',
          resolution: result === 'completed' ? 'auto_resolved' : 'needs_review',
          localValue: 'processing',
          detail:
            result === 'completed'
              ? `payment ${payment.id} was processing; completed with charge ${charge.id} (${charge.status})`
              : `payment ${payment.id} is processing and an attempt holds it; it settles with charge ${charge.id}`,
        });
        return;
      }
      payment = (await this.payments.findById(companyId, payment.id)) as PaymentView;
    }
    const expected = charge.status === 'failed' ? 'failed' : 'succeeded';
    if (
      payment.status !== expected ||
      (payment.providerChargeId !== null && payment.providerChargeId !== charge.id)
    ) {
      findings.push({
        ...base,
        kind: 'status_mismatch',
        resolution: 'needs_review',
        localValue: `${payment.status} ${payment.providerChargeId ?? ''}`.trim(),
        detail: `charge ${charge.id} is ${charge.status}; payment ${payment.id} ${payment.status} with charge ${payment.providerChargeId}`,
      });
      return;
    }
    if (expected === 'succeeded') await this.compareRefunds(companyId, payment, charge, findings);
  }

  private async compareRefunds(
    companyId: string,
    payment: PaymentView,
    charge: ProviderCharge,
    findings: Finding[],
  ): Promise<void> {
    const excess = refundExcess(payment, charge);
    if (excess !== null) {
      findings.push({
        kind: 'amount_mismatch',
        resolution: 'needs_review',
        objectType: 'refund',
        providerObjectId: charge.id,
        localId: payment.id,
        providerValue: `${charge.refunds.reduce((sum, refund) => sum + refund.amount, 0)} ${charge.currency}`,
        localValue: `${payment.amount} ${payment.currency}`,
        detail: `${excess}; none booked`,
      });
    }
    const booked = await this.txHost.withTransaction(() =>
      this.bookRefunds.bookMissing(companyId, payment, charge),
    );
    for (const refund of booked) {
      findings.push({
        kind: 'missing_locally',
        resolution: 'auto_resolved',
        objectType: 'refund',
        providerObjectId: refund.providerRefundId,
        localId: refund.id,
        providerValue: `${refund.amount} ${refund.currency}`,
        localValue: null,
        detail: `refund ${refund.providerRefundId} of charge ${charge.id} was not booked; booked now`,
      });
    }
    const atProvider = new Map(charge.refunds.map((refund) => [refund.id, refund]));
    for (const refund of await this.refunds.ofPayments(companyId, [payment.id])) {
      const theirs = atProvider.get(refund.providerRefundId);
      if (theirs === undefined || theirs.amount !== refund.amount) {
        findings.push({
          kind: theirs === undefined ? 'missing_at_provider' : 'amount_mismatch',
          resolution: 'needs_review',
          objectType: 'refund',
          providerObjectId: refund.providerRefundId,
          localId: refund.id,
          providerValue: theirs === undefined ? null : `${theirs.amount} ${charge.currency}`,
          localValue: `${refund.amount} ${refund.currency}`,
          detail: `refund ${refund.providerRefundId} booked here ${theirs === undefined ? 'is not on' : 'differs from'} charge ${charge.id}`,
        });
      }
    }
  }

  private async comparePayout(
    companyId: string,
    provider: string,
    payout: ProviderPayout,
    findings: Finding[],
  ): Promise<void> {
    const total = payout.charges.reduce((sum, charge) => sum + charge.amount, 0);
    const providerValue = `${total} ${payout.currency} fee ${payout.feeAmount}`;
    // The same path as the payout's event: imports it when nothing settles it yet, and says when
    // it cannot be booked as reported or a pushed settlement counts its payments twice.
    const imported = await this.importPayout.import(companyId, provider, payout);
    const settlement = await this.settlements.findByPayout(companyId, payout.id);
    const base = { objectType: 'payout' as const, providerObjectId: payout.id, providerValue };
    const localValue =
      settlement === null
        ? null
        : `${settlement.allocatedTotal} ${settlement.currency} fee ${settlement.feeAmount} ${settlement.source}`;
    switch (imported.kind) {
      case 'waiting':
        findings.push({
          ...base,
          kind: 'missing_locally',
          resolution: 'needs_review',
          localId: null,
          localValue: null,
          detail: `payout ${payout.id} pays out charges without a succeeded payment here: ${imported.chargeIds.slice(0, 5).join(', ')}`,
        });
        return;
      case 'rejected':
        findings.push({
          ...base,
          kind: 'missing_locally',
          resolution: 'needs_review',
          localId: null,
          localValue: null,
          detail: `${imported.reason}; not booked`,
        });
        return;
      case 'pushed_twice':
        findings.push({
          ...base,
          kind: 'status_mismatch',
          resolution: 'needs_review',
          localId: settlement?.id ?? imported.settlementId ?? null,
          localValue,
          detail: imported.reason,
        });
        return;
      case 'imported':
        if (settlement !== null) {
          findings.push({
            ...base,
            kind: 'missing_locally',
            resolution: 'auto_resolved',
            localId: settlement.id,
            localValue: null,
            detail: `payout ${payout.id} had no settlement; imported`,
          });
          return;
        }
        break;
      case 'settled_before':
      case 'refused':
        break;
    }
    if (
      settlement !== null &&
      (settlement.allocatedTotal !== total || settlement.feeAmount !== payout.feeAmount)
    ) {
      findings.push({
        kind: 'amount_mismatch',
        resolution: 'needs_review',
        objectType: 'payout',
        providerObjectId: payout.id,
        localId: settlement.id,
        providerValue,
        localValue: `${settlement.allocatedTotal} ${settlement.currency} fee ${settlement.feeAmount}`,
        detail: `settlement ${settlement.id} of payout ${payout.id} books other amounts than the provider paid out`,
      });
    }
  }
}
