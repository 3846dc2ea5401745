import { Injectable } from '@nestjs/common';
import { IdempotentExecutor } from '@ledgerkey/idempotency';
import { CREATE_PAYMENT_OPERATION, CreatePaymentHandler } from '../create-payment/create-payment.handler';
import type { PaymentView } from '../payments/payment.view';
import { PaymentsRepository } from '../payments/payments.repository';
import type { ProviderCharge } from '../provider-objects';

/**
 * How completing a payment with a reported charge ended:
 * - `completed`: the payment was processing and now has its outcome (and `alongside` ran with it);
 * - `held`: an attempt holds the payment's key (a request mid-call, or the recovery): it settles the
 *   payment itself; try again later;
 * - `finished`: the payment already had its outcome (nothing written);
 * - `mismatch`: the charge is not what the payment asked for (amount, currency, reference): the
 *   payment stays processing, for a person.
 */
export type CompletionResult = 'completed' | 'held' | 'finished' | 'mismatch';

/**
 * The one way a payment gets its outcome from a charge someone else reported (a webhook, a
 * reconciliation run): the recovery's resume of the payment's idempotency key, with the charge in
 * hand instead of a provider lookup. Fenced like every resume: a client retry, the recovery and
 * this never both settle a payment, and the key finishes with the payment, so a retry with it
 * replays the outcome.
 */
@Injectable()
export class CompletePaymentHandler {
  constructor(
    private readonly executor: IdempotentExecutor,
    private readonly createPayment: CreatePaymentHandler,
    private readonly payments: PaymentsRepository,
  ) {}

  /**
   * Outside any transaction (the protocol opens its own).
   * @param alongside runs in the transaction that settles the payment, after the outcome
   */
  async withCharge(
    companyId: string,
    payment: { payment: PaymentView; idempotencyKey: string },
    charge: ProviderCharge,
    alongside: (settled: PaymentView) => Promise<void>,
  ): Promise<CompletionResult> {
    const resumed = await this.executor.resume(
      { tenantId: companyId, operation: CREATE_PAYMENT_OPERATION.operation, key: payment.idempotencyKey },
      CREATE_PAYMENT_OPERATION,
      this.createPayment.completion(companyId, charge, alongside),
    );
    switch (resumed.result) {
      case 'completed':
        return 'completed';
      case 'pending':
        return 'mismatch';
      case 'skipped': {
        const now = await this.payments.findById(companyId, payment.payment.id);
        return now?.status === 'processing' ? 'held' : 'finished';
      }
    }
  }
}
