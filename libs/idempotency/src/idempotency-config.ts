import { type Env, EnvReader, type ParsedConfig } from '@ledgerkey/process';

/** The idempotency layer's settings from the environment (the rest comes from the application). */
export interface IdempotencyConfig {
  /** IDEMPOTENCY_KEY_TTL: how long a finished key replays, in seconds. */
  ttlSeconds: number;
  /** BENCHMARK_DISABLE_IDEMPOTENCY: benchmark only, runs keyed routes without the layer. */
  benchmarkBypass: boolean;
}

export function parseIdempotencyConfig(env: Env): ParsedConfig<IdempotencyConfig> {
  const reader = new EnvReader(env);
  return reader.parsed({
    ttlSeconds: reader.integer('IDEMPOTENCY_KEY_TTL', 86_400, 1, 31 * 86_400),
    benchmarkBypass: reader.boolean('BENCHMARK_DISABLE_IDEMPOTENCY', false),
  });
}
