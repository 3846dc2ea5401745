import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type {
  EffectAttempt,
  EffectResult,
  ExternalEffect,
  IdempotencyKeyRef,
  IdempotentOperation,
} from '@ledgerkey/idempotency';
import { metadataOf } from '@ledgerkey/database';
import { InvoiceBalances, InvoiceNotFoundError, type PayableInvoice } from '@ledgerkey/invoicing';
import { JournalRepository, paymentPosting } from '@ledgerkey/ledger';
import { EventsRepository } from '@ledgerkey/outbox';
import type { PaymentProvider } from '../payment-provider';
import {
  PaymentProviderAmbiguousReferenceError,
  PaymentProviderRequestError,
  PaymentProviderUnavailableError,
} from '../payment-provider.errors';
import { PAYMENTS_OPTIONS, PAYMENT_PROVIDER, type PaymentsOptions } from '../payments-options';
import {
  AmountExceedsOutstandingError,
  InvoiceFullyCreditedError,
  PaymentCurrencyMismatchError,
  PaymentProviderNotConfiguredError,
} from '../payments.errors';
import type { PaymentView } from '../payments/payment.view';
import { type PaymentOutcome, PaymentsRepository, type StoredPayment } from '../payments/payments.repository';
import type { ProviderCharge } from '../provider-objects';
import {
  type CreatePaymentCommand,
  type CreatePaymentDto,
  toCreatePaymentCommand,
} from './create-payment.dto';
import { TestCrashPoint } from './test-crash-point';

/** The idempotent operation `POST /v1/payments/create`, shared by its route and the recovery. */
export const CREATE_PAYMENT_OPERATION: IdempotentOperation<PaymentView> = {
  operation: 'payments.create',
  status: 201,
  location: (payment) => `/v1/payments/${payment.id}`,
};

/** The stable reference of a payment at the provider: derived before the call, never changed. */
export function providerReferenceOf(paymentId: string): string {
  return `lkpay_${paymentId}`;
}

/**
 * Charges an invoice through the payment provider, as an `ExternalEffect` that the idempotency
 * protocol runs:
 * - prepare (with the key, `in_progress`): under the invoice's row lock, checks the amount against
 *   what is outstanding (gross − credited − paid − payments of the invoice still processing) and
 *   inserts the payment `processing` with its provider reference;
 * - perform (no transaction): charges with the reference as the provider's idempotency key; a
 *   resumed attempt first looks the charge up by reference and charges only when there is none;
 * - settle (with the finished key): succeeded → ledger entry (provider clearing / receivables),
 *   the invoice's paid total, `payment.succeeded`; failed → the failure code, `payment.failed`.
 */
@Injectable()
export class CreatePaymentHandler {
  private readonly logger = new Logger('Payments');
  private readonly crashPoint: TestCrashPoint;

  constructor(
    private readonly payments: PaymentsRepository,
    private readonly balances: InvoiceBalances,
    private readonly journal: JournalRepository,
    private readonly events: EventsRepository,
    @Inject(PAYMENT_PROVIDER) private readonly provider: PaymentProvider | null,
    @Inject(PAYMENTS_OPTIONS) private readonly options: PaymentsOptions,
  ) {
    this.crashPoint = new TestCrashPoint(options.config.testCrashPoint);
  }

  /**
   * The payment a request asks for, as an operation for `IdempotentExecutor.executeExternal`
   * (which prepares it for a new key, or resumes the key's unfinished payment). Nothing happens
   * until the protocol runs it.
   */
  forRequest(
    companyId: string,
    dto: CreatePaymentDto,
  ): ExternalEffect<StoredPayment, PaymentOutcome, PaymentView> {
    return this.effect(companyId, toCreatePaymentCommand(dto));
  }

  /** The resume of an unfinished payment of the company, for `IdempotentExecutor.resume` (the recovery). */
  resumption(companyId: string): ExternalEffect<StoredPayment, PaymentOutcome, PaymentView> {
    return this.effect(companyId, null);
  }

  private effect(
    companyId: string,
    command: CreatePaymentCommand | null,
  ): ExternalEffect<StoredPayment, PaymentOutcome, PaymentView> {
    const { config } = this.options;
    return {
      leaseSeconds: config.leaseSeconds,
      retryAfterSeconds: Math.max(1, Math.ceil(config.providerTimeoutMs / 1000)),
      prepare: (ref) => {
        if (command === null) throw new Error('a resume of a payment cannot prepare a new one');
        return this.prepare(companyId, command, ref);
      },
      load: (ref) => this.load(ref),
      perform: (stored, attempt) => this.perform(companyId, stored, attempt),
      settle: (stored, outcome) => this.settle(companyId, stored, outcome),
      pending: (stored) => stored.payment,
    };
  }

  /**
   * @throws PaymentProviderNotConfiguredError (503, nothing stored)
   * @throws InvoiceNotFoundError, PaymentCurrencyMismatchError, InvoiceFullyCreditedError,
   *   AmountExceedsOutstandingError: business rejections, stored under the key; nothing charged
   */
  private async prepare(
    companyId: string,
    command: CreatePaymentCommand,
    ref: IdempotencyKeyRef,
  ): Promise<StoredPayment> {
    if (this.provider === null) throw new PaymentProviderNotConfiguredError();
    // Invoice row first (lock order of every document that changes an invoice's totals): payments
    // of this invoice queue here, so the outstanding amount read below stays true until COMMIT.
    const invoice = await this.balances.lock(companyId, command.invoiceId);
    if (invoice === null) throw new InvoiceNotFoundError(command.invoiceId);
    if (command.currency !== null && command.currency !== invoice.currency) {
      throw new PaymentCurrencyMismatchError(invoice, command.currency);
    }
    if (invoice.creditedTotal >= invoice.grossTotal) throw new InvoiceFullyCreditedError(invoice);
    const processing = await this.payments.processingTotal(companyId, invoice.id);
    const amount = command.amount ?? outstandingOf(invoice, processing);
    if (amount <= 0 || amount > outstandingOf(invoice, processing)) {
      throw new AmountExceedsOutstandingError(invoice, processing, amount);
    }
    const id = randomUUID();
    const now = new Date().toISOString();
    const payment: PaymentView = {
      id,
      object: 'payment',
      invoiceId: invoice.id,
      amount,
      currency: invoice.currency,
      status: 'processing',
      failureCode: null,
      provider: this.provider.name,
      providerReference: providerReferenceOf(id),
      providerChargeId: null,
      metadata: metadataOf(command.metadata),
      createdAt: now,
      updatedAt: now,
    };
    await this.payments.insert(companyId, payment, command.paymentMethod, ref.key);
    return { payment, paymentMethod: command.paymentMethod };
  }

  private async load(ref: IdempotencyKeyRef): Promise<StoredPayment> {
    const stored = await this.payments.findProcessingByKey(ref.tenantId, ref.key);
    if (stored === null) {
      throw new Error(
        `key ${ref.key} of company ${ref.tenantId} is unfinished but has no processing payment`,
      );
    }
    return stored;
  }

  /**
   * The provider call, outside any transaction, bounded by PAYMENT_PROVIDER_TIMEOUT_MS per call
   * (two on a resume: the lookup, then perhaps the charge), well within the lease.
   */
  private async perform(
    companyId: string,
    stored: StoredPayment,
    attempt: EffectAttempt,
  ): Promise<EffectResult<PaymentOutcome>> {
    const { payment, paymentMethod } = stored;
    const provider = this.provider;
    if (provider === null) return { known: false, reason: 'no payment provider configured' };
    const timeoutMs = this.options.config.providerTimeoutMs;
    await this.crashPoint.reach('before_provider_call');
    if (attempt.resumed) {
      // An earlier attempt may have charged: ask before charging again.
      const found = await this.lookUp(payment, timeoutMs);
      if (found.kind === 'unknown') return { known: false, reason: found.reason };
      if (found.kind === 'charge') {
        await this.crashPoint.reach('after_provider_answer');
        return this.outcomeOfCharge(payment, found.charge);
      }
    }
    // The same reference as the idempotency key on every attempt: one charge however often sent.
    const outcome = await provider.createCharge(
      {
        reference: payment.providerReference,
        amount: payment.amount,
        currency: payment.currency,
        paymentMethod,
        metadata: { companyId, paymentId: payment.id },
      },
      { idempotencyKey: payment.providerReference, timeoutMs },
    );
    await this.crashPoint.reach('after_provider_answer');
    switch (outcome.kind) {
      case 'succeeded':
      case 'failed':
        return this.outcomeOfCharge(payment, outcome.charge);
      case 'rejected':
        // The provider refused the request as such: nothing was charged, and sending it again is
        // refused again. A final outcome, like a decline.
        this.logger.warn(
          `payment ${payment.id}: the provider refused the charge (${outcome.status} ${outcome.code}): ${outcome.message}`,
        );
        return { known: true, outcome: { status: 'failed', failureCode: outcome.code, chargeId: null } };
      case 'unknown':
        return { known: false, reason: `${outcome.reason}: ${outcome.detail}` };
    }
  }

  private async lookUp(
    payment: PaymentView,
    timeoutMs: number,
  ): Promise<
    { kind: 'charge'; charge: ProviderCharge } | { kind: 'none' } | { kind: 'unknown'; reason: string }
  > {
    try {
      const charge = await (this.provider as PaymentProvider).findChargeByReference(
        payment.providerReference,
        {
          timeoutMs,
        },
      );
      return charge === null ? { kind: 'none' } : { kind: 'charge', charge };
    } catch (error) {
      if (error instanceof PaymentProviderAmbiguousReferenceError) {
        // Someone else charged with our reference: which charge is the payment's is for a person.
        this.logger.error(`payment ${payment.id}: ${error.message}; it stays processing`);
        return { kind: 'unknown', reason: 'ambiguous_reference' };
      }
      if (error instanceof PaymentProviderUnavailableError || error instanceof PaymentProviderRequestError) {
        return { kind: 'unknown', reason: `lookup: ${error.message}` };
      }
      throw error;
    }
  }

  /** A charge the provider holds for our reference, as the payment's outcome. */
  private outcomeOfCharge(payment: PaymentView, charge: ProviderCharge): EffectResult<PaymentOutcome> {
    if (charge.amount !== payment.amount || charge.currency.toUpperCase() !== payment.currency) {
      // Never book what the provider did not charge for this payment.
      this.logger.error(
        `payment ${payment.id}: the provider's charge ${charge.id} for ${payment.providerReference} is ` +
          `${charge.amount} ${charge.currency}, the payment ${payment.amount} ${payment.currency}; it stays processing`,
      );
      return { known: false, reason: 'charge_mismatch' };
    }
    // A charge refunded since is still a payment that succeeded (refunds are booked on their own).
    return charge.status === 'failed'
      ? {
          known: true,
          outcome: { status: 'failed', failureCode: charge.failureCode ?? 'unknown', chargeId: charge.id },
        }
      : { known: true, outcome: { status: 'succeeded', chargeId: charge.id } };
  }

  /**
   * The outcome, with its effects, in the transaction that finishes the key. Invoice row first
   * (the lock order of every document), the event last (its position lock is held to COMMIT).
   */
  private async settle(
    companyId: string,
    stored: StoredPayment,
    outcome: PaymentOutcome,
  ): Promise<PaymentView> {
    const { payment } = stored;
    const now = new Date();
    const invoice =
      outcome.status === 'succeeded' ? await this.balances.lock(companyId, payment.invoiceId) : null;
    const settled = await this.payments.recordOutcome(companyId, payment.id, outcome, now);
    if (settled === null) throw new Error(`payment ${payment.id} is no longer processing`);
    if (settled.status === 'succeeded') {
      await this.journal.post({
        companyId,
        currency: settled.currency,
        sourceType: 'payment',
        sourceId: settled.id,
        memo: `Payment ${settled.providerReference} of invoice ${invoice?.number ?? settled.invoiceId}`,
        postedAt: new Date(settled.updatedAt),
        lines: paymentPosting(settled),
      });
      await this.balances.addPaid(companyId, settled.invoiceId, settled.amount);
    }
    await this.events.append(
      companyId,
      `payment.${settled.status as 'succeeded' | 'failed'}`,
      settled,
      settled.updatedAt,
    );
    return settled;
  }
}

function outstandingOf(invoice: PayableInvoice, processing: number): number {
  return invoice.grossTotal - invoice.creditedTotal - invoice.paidTotal - processing;
}
