import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { IdempotencyInterceptor } from './idempotency.interceptor';
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
    return {
      module: IdempotencyModule,
      global: true,
      imports: options.imports ?? [],
      providers: [optionsProvider, IdempotencyRecordRepository, IdempotencyInterceptor],
      exports: [IDEMPOTENCY_OPTIONS, IdempotencyRecordRepository, IdempotencyInterceptor],
    };
  }
}
