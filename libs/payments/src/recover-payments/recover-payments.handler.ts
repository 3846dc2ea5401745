import { Inject, Injectable, Logger } from '@nestjs/common';
import { IdempotentExecutor, type StalledOperation } from '@ledgerkey/idempotency';
import { CREATE_PAYMENT_OPERATION, CreatePaymentHandler } from '../create-payment/create-payment.handler';
import type { PaymentProvider } from '../payment-provider';
import { PAYMENTS_OPTIONS, PAYMENT_PROVIDER, type PaymentsOptions } from '../payments-options';
import {
  NO_OP_PAYMENTS_OBSERVER,
  type PaymentRecoveryResult,
  type PaymentsObserver,
} from '../payments.observer';

/** Payments one run takes at most (each is up to two provider calls). */
const BATCH = 25;
/** The longest wait between two recovery attempts of one payment. */
const MAX_BACKOFF_MS = 3_600_000;

export type RecoveryReport = Record<PaymentRecoveryResult, number>;

/**
 * Resumes payments whose attempt stopped without an outcome — the client got `202`, or the API
 * died mid-payment — without waiting for a client retry: each is taken over (fenced by the key's
 * attempt, so a client retry and the recovery never both act), the provider is asked for the
 * charge by reference, and the payment finishes with what the provider holds, or is charged
 * again with the same reference when it holds nothing. Bounded: PAYMENT_RECOVERY_MAX_ATTEMPTS
 * attempts with a doubling backoff (from PAYMENT_RECOVERY_INTERVAL_MS up to an hour); a payment
 * still unknown after that stays `processing` (its key `failed_retryable`), logged, counted by the
 * unfinished-operations metric, and resumable by a client retry with its key.
 */
@Injectable()
export class RecoverPaymentsHandler {
  private readonly logger = new Logger('PaymentRecovery');
  private readonly observer: PaymentsObserver;

  constructor(
    private readonly executor: IdempotentExecutor,
    private readonly createPayment: CreatePaymentHandler,
    @Inject(PAYMENT_PROVIDER) private readonly provider: PaymentProvider | null,
    @Inject(PAYMENTS_OPTIONS) private readonly options: PaymentsOptions,
  ) {
    this.observer = options.observer ?? NO_OP_PAYMENTS_OBSERVER;
  }

  /** One pass over the payments that are due. */
  async execute(): Promise<RecoveryReport> {
    const report: RecoveryReport = { succeeded: 0, failed: 0, pending: 0, skipped: 0, error: 0 };
    if (this.provider === null) return report;
    const { recovery } = this.options.config;
    const due = await this.executor.stalledOperations({
      operation: CREATE_PAYMENT_OPERATION.operation,
      limit: BATCH,
      maxAttempts: recovery.maxAttempts,
      retryBaseMs: recovery.intervalMs,
      retryMaxMs: MAX_BACKOFF_MS,
    });
    for (const stalled of due) {
      const result = await this.recover(stalled);
      report[result] += 1;
      this.observer.recovery(result);
    }
    return report;
  }

  private async recover(stalled: StalledOperation): Promise<PaymentRecoveryResult> {
    const { ref } = stalled;
    try {
      const resumed = await this.executor.resume(
        ref,
        CREATE_PAYMENT_OPERATION,
        this.createPayment.resumption(ref.tenantId),
      );
      switch (resumed.result) {
        case 'completed':
          this.logger.log(
            `payment ${resumed.value.id} (company ${ref.tenantId}) recovered at attempt ${resumed.attempt}: ${resumed.value.status}`,
          );
          return resumed.value.status === 'succeeded' ? 'succeeded' : 'failed';
        case 'pending':
          if (resumed.attempt >= this.options.config.recovery.maxAttempts) {
            this.logger.error(
              `payment of key ${ref.key} (company ${ref.tenantId}) is still unknown after ${resumed.attempt} ` +
                `attempts (${resumed.reason}); the recovery leaves it processing: reconcile it with the provider, ` +
                'or retry with its Idempotency-Key',
            );
          } else {
            this.logger.warn(
              `payment of key ${ref.key} (company ${ref.tenantId}) still unknown at attempt ${resumed.attempt}: ${resumed.reason}`,
            );
          }
          return 'pending';
        case 'skipped':
          return 'skipped';
      }
    } catch (error) {
      this.logger.error(
        `recovery of the payment of key ${ref.key} (company ${ref.tenantId}) failed; it is tried again`,
        error instanceof Error ? error.stack : error,
      );
      return 'error';
    }
  }
}
