import { type Env, EnvReader, type ParsedConfig } from '@ledgerkey/process';
import type { ReplayCacheLimits } from './replay-cache';

const MIB = 1024 * 1024;

/** The idempotency layer's settings from the environment (the rest comes from the application). */
export interface IdempotencyConfig {
  /** IDEMPOTENCY_KEY_TTL: how long a finished key replays, in seconds. */
  ttlSeconds: number;
  /**
   * BENCHMARK_DISABLE_IDEMPOTENCY (benchmark only: refused unless NODE_ENV=test): keyed routes
   * run without the layer (`UnkeyedExecutor`), so a retry runs the operation again.
   */
  benchmarkBypass: boolean;
  /**
   * IDEMPOTENCY_REPLAY_CACHE_SIZE (answers; 0: off) and IDEMPOTENCY_REPLAY_CACHE_BYTES: replays
   * of finished keys kept in each API process.
   */
  replayCache: ReplayCacheLimits;
}

export function parseIdempotencyConfig(env: Env): ParsedConfig<IdempotencyConfig> {
  const reader = new EnvReader(env);
  return reader.parsed({
    ttlSeconds: reader.integer('IDEMPOTENCY_KEY_TTL', 86_400, 1, 31 * 86_400),
    benchmarkBypass:
      reader.testSwitch(
        'BENCHMARK_DISABLE_IDEMPOTENCY',
        'runs keyed routes without the idempotency layer (a retried payment charges again)',
      ) && reader.boolean('BENCHMARK_DISABLE_IDEMPOTENCY', false),
    replayCache: {
      maxEntries: reader.integer('IDEMPOTENCY_REPLAY_CACHE_SIZE', 10_000, 0, 1_000_000),
      maxBytes: reader.integer('IDEMPOTENCY_REPLAY_CACHE_BYTES', 16 * MIB, MIB, 4096 * MIB),
    },
  });
}
