import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { InvoicingModule } from '@ledgerkey/invoicing';
import { JobsModule } from '@ledgerkey/jobs';
import { LedgerModule } from '@ledgerkey/ledger';
import { OutboxModule } from '@ledgerkey/outbox';
import { BookRefundsHandler } from './book-refunds/book-refunds.handler';
import { CompletePaymentHandler } from './complete-payment/complete-payment.handler';
import { CreatePaymentHandler } from './create-payment/create-payment.handler';
import { ImportPayoutHandler } from './import-payout/import-payout.handler';
import { ObservedPaymentProvider } from './observed-payment-provider';
import type { PaymentProvider } from './payment-provider';
import { PaymentJobs } from './payment-jobs';
import { PAYMENTS_OPTIONS, PAYMENT_PROVIDER, type PaymentsOptions } from './payments-options';
import { NO_OP_PAYMENTS_OBSERVER } from './payments.observer';
import { PaymentQueries } from './payments/payment-queries';
import { PaymentsRepository } from './payments/payments.repository';
import { ProviderEventsRepository } from './provider-events/provider-events.repository';
import { ReceiveProviderEventHandler } from './provider-events/receive-provider-event.handler';
import { ReconciliationQueries } from './reconciliation/reconciliation-queries';
import { ReconciliationRunsRepository } from './reconciliation/reconciliation-runs.repository';
import { RunReconciliationHandler } from './reconciliation/run-reconciliation.handler';
import { RecoverPaymentsHandler } from './recover-payments/recover-payments.handler';
import { RefundsRepository } from './refunds/refunds.repository';
import { SandboxPaymentProvider } from './sandbox/sandbox-payment-provider';

/**
 * Payments through the payment provider: the create use case (run by the idempotency protocol as
 * an external effect), queries, the recovery, the provider's events (refunds, payouts as
 * settlements) and reconciliation, with their tasks (registered in the process's JobRegistry).
 * Needs the DatabaseModule, nestjs-cls and a global `IdempotentExecutor` (IdempotencyModule).
 */
@Module({})
export class PaymentsModule {
  static forRootAsync(options: {
    imports?: DynamicModule['imports'];
    inject?: Array<string | symbol | Function>;
    useFactory: (...deps: never[]) => PaymentsOptions;
  }): DynamicModule {
    const optionsProvider: Provider = {
      provide: PAYMENTS_OPTIONS,
      inject: options.inject ?? [],
      useFactory: options.useFactory,
    };
    const providerProvider: Provider = {
      provide: PAYMENT_PROVIDER,
      inject: [PAYMENTS_OPTIONS],
      useFactory: paymentProviderOf,
    };
    return {
      module: PaymentsModule,
      imports: [InvoicingModule, LedgerModule, OutboxModule, JobsModule, ...(options.imports ?? [])],
      providers: [
        optionsProvider,
        providerProvider,
        PaymentsRepository,
        PaymentQueries,
        CreatePaymentHandler,
        RecoverPaymentsHandler,
        RefundsRepository,
        BookRefundsHandler,
        CompletePaymentHandler,
        ImportPayoutHandler,
        ProviderEventsRepository,
        ReceiveProviderEventHandler,
        ReconciliationRunsRepository,
        RunReconciliationHandler,
        ReconciliationQueries,
        PaymentJobs,
      ],
      exports: [
        CreatePaymentHandler,
        PaymentQueries,
        RecoverPaymentsHandler,
        ReceiveProviderEventHandler,
        RunReconciliationHandler,
        ReconciliationQueries,
        PaymentJobs,
        PAYMENT_PROVIDER,
      ],
    };
  }
}

/** The configured provider (the sandbox adapter: the only one so far), observed; null without a URL. */
function paymentProviderOf(options: PaymentsOptions): PaymentProvider | null {
  const { provider, providerTimeoutMs } = options.config;
  if (provider.url === undefined || provider.apiKey === undefined) return null;
  return new ObservedPaymentProvider(
    new SandboxPaymentProvider({
      baseUrl: provider.url,
      apiKey: provider.apiKey,
      readTimeoutMs: providerTimeoutMs,
    }),
    options.observer ?? NO_OP_PAYMENTS_OBSERVER,
  );
}
