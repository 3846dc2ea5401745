import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { DatabasePool, TransactionHost, type PgTransactionalAdapter } from '@ledgerkey/database';
import { clsProtocolPorts } from './cls-transactions';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import {
  IDEMPOTENCY_OBSERVER,
  NO_OP_IDEMPOTENCY_OBSERVER,
  type IdempotencyObserver,
} from './idempotency.observer';
import { IDEMPOTENCY_OPTIONS, type IdempotencyModuleOptions } from './idempotency.options';
import { IdempotencyProtocol } from './idempotency-protocol';
import { CachedReplays } from './cached-replays';
import { SYSTEM_CLOCK } from './idempotency-ports';
import { IdempotentExecutor } from './idempotent-executor';
import { ReplayCache } from './replay-cache';
import { UnkeyedExecutor } from './unkeyed-executor';

type ClsTransactionHost = TransactionHost<PgTransactionalAdapter>;

/**
 * Wires the framework-free protocol to Nest: nestjs-cls transactions, the SQL record store, and
 * the interceptor behind `@Idempotent`. `IdempotentExecutor` is injectable for callers without
 * HTTP (the operator CLI); `CachedReplays`, the process's kept replays, for the API's replay
 * front door.
 */
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
      providers: [
        optionsProvider,
        observerProvider,
        cachedReplaysProvider(),
        executorProvider(),
        IdempotencyInterceptor,
      ],
      exports: [
        IDEMPOTENCY_OPTIONS,
        IDEMPOTENCY_OBSERVER,
        CachedReplays,
        IdempotentExecutor,
        IdempotencyInterceptor,
      ],
    };
  }

  /**
   * The protocol without HTTP, for processes that only resume operations (the standalone worker's
   * payment recovery): `IdempotentExecutor` on the same store, no interceptor. It stores no
   * business rejections (a resume never prepares; nothing to classify) and seals nothing (no
   * resumable operation answers a secret).
   */
  static forExecutor(
    options: Pick<IdempotencyModuleOptions, 'ttlSeconds' | 'clock' | 'observer'>,
  ): DynamicModule {
    const resolved: ExecutorOptions = { ...options, classifier: { classify: () => null } };
    return {
      module: IdempotencyModule,
      global: true,
      providers: [
        { provide: IDEMPOTENCY_OPTIONS, useValue: resolved },
        { provide: IDEMPOTENCY_OBSERVER, useValue: options.observer ?? NO_OP_IDEMPOTENCY_OBSERVER },
        cachedReplaysProvider(),
        executorProvider(),
      ],
      exports: [IDEMPOTENCY_OBSERVER, IdempotentExecutor],
    };
  }
}

/** What building the executor reads of the module's options. */
type ExecutorOptions = Pick<
  IdempotencyModuleOptions,
  'ttlSeconds' | 'benchmarkBypass' | 'classifier' | 'clock' | 'sealer' | 'replayCache'
>;

/** One per process: a replay is served by the process that finished or last read the key. */
function cachedReplaysProvider(): Provider {
  return {
    provide: CachedReplays,
    inject: [IDEMPOTENCY_OPTIONS, IDEMPOTENCY_OBSERVER],
    useFactory: (resolved: ExecutorOptions, observer: IdempotencyObserver) => {
      const limits = resolved.replayCache;
      const cache = limits && limits.maxEntries > 0 ? new ReplayCache(limits) : undefined;
      return new CachedReplays(cache, observer, resolved.clock ?? SYSTEM_CLOCK);
    },
  };
}

function executorProvider(): Provider {
  return {
    provide: IdempotentExecutor,
    inject: [IDEMPOTENCY_OPTIONS, IDEMPOTENCY_OBSERVER, CachedReplays, TransactionHost, DatabasePool],
    useFactory: (
      resolved: ExecutorOptions,
      observer: IdempotencyObserver,
      cachedReplays: CachedReplays,
      txHost: ClsTransactionHost,
      pool: DatabasePool,
    ): IdempotentExecutor => {
      const { transactions, records } = clsProtocolPorts(txHost, pool);
      if (resolved.benchmarkBypass === true) return new UnkeyedExecutor(transactions);
      return new IdempotencyProtocol({
        ttlSeconds: resolved.ttlSeconds,
        transactions,
        records,
        classifier: resolved.classifier,
        clock: resolved.clock,
        sealer: resolved.sealer,
        observer,
        cachedReplays,
      });
    },
  };
}
