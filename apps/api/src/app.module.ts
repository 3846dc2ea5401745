import { type DynamicModule, Module, type ModuleMetadata } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR, APP_PIPE, DiscoveryModule } from '@nestjs/core';
import { AssetsModule } from '@ledgerkey/assets';
import { type DatabaseHandle, DatabaseModule, transactionalPlugin } from '@ledgerkey/database';
import { EInvoicingModule } from '@ledgerkey/einvoicing';
import { IdempotencyModule, IdempotencyPurgeModule } from '@ledgerkey/idempotency';
import { InvoicingModule } from '@ledgerkey/invoicing';
import { JobsModule } from '@ledgerkey/jobs';
import { LedgerModule } from '@ledgerkey/ledger';
import { OutboxModule } from '@ledgerkey/outbox';
import { PaymentsModule } from '@ledgerkey/payments';
import { PurchasingModule } from '@ledgerkey/purchasing';
import { ReportingModule } from '@ledgerkey/reporting';
import { SecretBox, SecretsModule } from '@ledgerkey/secrets';
import { companyOf, TenancyModule } from '@ledgerkey/tenancy';
import { WebhooksModule } from '@ledgerkey/webhooks';
import { ClsModule, ClsService } from 'nestjs-cls';
import { MIGRATIONS } from '../../../migrations';
import { AdminController } from './admin/admin.controller';
import { AdminTokenGuard } from './admin/admin-token.guard';
import { AssetsController } from './assets/assets.controller';
import { DepreciationRunsController } from './assets/depreciation-runs.controller';
import { API_CONFIG, type ApiConfig } from './config';
import { CompanyProfileController } from './company/company-profile.controller';
import { IsafSettingsController } from './company/isaf-settings.controller';
import { CreditNotesController } from './credit-notes/credit-notes.controller';
import { EventsController } from './events/events.controller';
import { HealthController } from './health/health.controller';
import { LoggingModule } from './logging/logging.module';
import { IdempotencyMetrics } from './metrics/idempotency.metrics';
import { MetricsModule } from './metrics/metrics.module';
import { PaymentMetrics } from './metrics/payment.metrics';
import { PaymentsController } from './payments/payments.controller';
import { InvoicesController } from './invoices/invoices.controller';
import { LedgerController } from './ledger/ledger.controller';
import { ProviderEventsController } from './providers/provider-events.controller';
import { PurchaseInvoicesController } from './purchases/purchase-invoices.controller';
import { ExportsController } from './reports/exports.controller';
import { ReportsController } from './reports/reports.controller';
import { ReconciliationController } from './reconciliation/reconciliation.controller';
import { SettlementsController } from './settlements/settlements.controller';
import { WebhookEndpointsController } from './webhooks/webhook-endpoints.controller';
import { ApiKeysController } from './api-keys/api-keys.controller';
import { PROBLEM_CONTENT_TYPE, renderProblem, problemCodeOf } from './problem-details';
import { replayBodySealer } from './replay-body-sealer';
import { ReplayFrontDoor } from './replay-front-door/replay-front-door';
import { ProblemDetailsFilter } from './problem-details.filter';
import { requestValidationPipe } from './request-validation';
import { InFlightHandlers } from './in-flight-handlers';

type ModuleImport = NonNullable<ModuleMetadata['imports']>[number];

@Module({})
export class AppModule {
  /** @param extensions modules the application is extended with (their routes, providers, middleware) */
  static forRoot(
    config: ApiConfig,
    database: DatabaseHandle,
    extensions: ModuleImport[] = [],
  ): DynamicModule {
    return {
      module: AppModule,
      imports: [
        DiscoveryModule,
        LoggingModule.forRoot(config.process.logLevel),
        MetricsModule,
        ClsModule.forRoot({
          global: true,
          // Mounted by createApp, in the request pipeline's order (request-pipeline.ts).
          middleware: { mount: false },
          plugins: [transactionalPlugin()],
        }),
        DatabaseModule.forRoot({
          url: database.url,
          afterClose: database.embedded?.stop,
          poolSize: config.databasePoolSize,
          statementTimeoutMs: config.database.statementTimeoutMs,
          preparedStatements: config.database.preparedStatements,
          applicationName: 'ledgerkey-api',
          migrations: MIGRATIONS,
        }),
        SecretsModule.forRoot(config.secrets),
        TenancyModule.forRoot(config.rateLimits),
        LedgerModule,
        OutboxModule,
        InvoicingModule,
        EInvoicingModule,
        PurchasingModule,
        ReportingModule,
        AssetsModule,
        WebhooksModule.forRoot(config.webhooks),
        // The job runner: idle unless main.ts starts it (RUN_WORKER); stops before the database pool closes.
        JobsModule,
        IdempotencyPurgeModule,
        PaymentsModule.forRootAsync({
          imports: [MetricsModule],
          inject: [PaymentMetrics],
          useFactory: (metrics: PaymentMetrics) => ({ config: config.payments, observer: metrics }),
        }),
        IdempotencyModule.forRootAsync({
          imports: [MetricsModule],
          inject: [IdempotencyMetrics, ClsService, SecretBox],
          useFactory: (metrics: IdempotencyMetrics, cls: ClsService, secrets: SecretBox) => ({
            ttlSeconds: config.idempotency.ttlSeconds,
            benchmarkBypass: config.idempotency.benchmarkBypass,
            replayCache: config.idempotency.replayCache,
            observer: metrics,
            // Seals the stored answers of `sensitiveResponse` routes (API keys, signing secrets).
            sealer: replayBodySealer(secrets),
            resolveScope: (request) => {
              const company = companyOf(request);
              return { tenantId: company.id, context: company };
            },
            validateBody: (body, dto) =>
              requestValidationPipe.transform(body, { type: 'body', metatype: dto }) as Promise<object>,
            classifier: {
              // A known domain error below 500 is a business outcome: its problem is stored and
              // replayed, with the first request's id.
              classify: (error) => {
                if (problemCodeOf(error) === undefined) return null;
                const problem = renderProblem(error, cls.getId());
                if (problem.status >= 500) return null;
                return {
                  status: problem.status,
                  headers: { ...problem.headers, 'Content-Type': PROBLEM_CONTENT_TYPE },
                  body: JSON.stringify(problem.body),
                };
              },
            },
          }),
        }),
        ...extensions,
      ],
      controllers: [
        InvoicesController,
        CreditNotesController,
        PurchaseInvoicesController,
        SettlementsController,
        PaymentsController,
        ProviderEventsController,
        ReconciliationController,
        LedgerController,
        EventsController,
        WebhookEndpointsController,
        CompanyProfileController,
        ApiKeysController,
        ReportsController,
        ExportsController,
        IsafSettingsController,
        AssetsController,
        DepreciationRunsController,
        AdminController,
        HealthController,
      ],
      providers: [
        { provide: API_CONFIG, useValue: config },
        { provide: APP_FILTER, useClass: ProblemDetailsFilter },
        { provide: APP_PIPE, useValue: requestValidationPipe },
        InFlightHandlers,
        { provide: APP_INTERCEPTOR, useExisting: InFlightHandlers },
        AdminTokenGuard,
        ReplayFrontDoor,
      ],
    };
  }
}
