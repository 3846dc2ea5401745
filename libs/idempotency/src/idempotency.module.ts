import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IDEMPOTENCY_OBSERVER, NO_OP_IDEMPOTENCY_OBSERVER } from './idempotency.observer';
import { IDEMPOTENCY_OPTIONS, type IdempotencyModuleOptions } from './idempotency.options';
import { IdempotencyRecordRepository } from './idempotency-record.repository';

@Module({})
export class IdempotencyModule {
  static forRootAsync(options: {
    imports?: DynamicModule['imports'];
    inject?: Array<string | symbol | Function>;
    useFactory: (...deps: never[]) => IdempotencyModuleOptions;
  }): DynamicModule {
    const optionsProvider: Provider = {
      provide: IDEMPOTENCY_OPTIONS,
      inject: options.inject ?? [],
      useFactory: options.useFactory,
    };
    const observerProvider: Provider = {
      provide: IDEMPOTENCY_OBSERVER,
      inject: [IDEMPOTENCY_OPTIONS],
      useFactory: (resolved: IdempotencyModuleOptions) => resolved.observer ?? NO_OP_IDEMPOTENCY_OBSERVER,
    };
    return {
      module: IdempotencyModule,
      global: true,
      imports: options.imports ?? [],
      providers: [optionsProvider, observerProvider, IdempotencyRecordRepository, IdempotencyInterceptor],
      exports: [
        IDEMPOTENCY_OPTIONS,
        IDEMPOTENCY_OBSERVER,
        IdempotencyRecordRepository,
        IdempotencyInterceptor,
      ],
    };
  }
}
