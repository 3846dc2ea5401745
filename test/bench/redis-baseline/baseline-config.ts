export const BASELINE_CONFIG = Symbol('BASELINE_CONFIG');

export interface BaselineConfig {
  port: number;
  host: string;
  databaseUrl: string;
  poolSize: number;
  adminToken: string;
  redisUrl: string;
  /** Prefix of this run's idempotency keys in Redis (the bench deletes them afterwards). */
  redisKeyPrefix: string;
}

/** The environment, read once. */
export function loadBaselineConfig(env: NodeJS.ProcessEnv): BaselineConfig {
  const required = (name: string): string => {
    const value = env[name];
    if (!value) throw new Error(`${name} is required`);
    return value;
  };
  return {
    port: Number(env.PORT ?? 3100),
    host: env.HOST ?? '127.0.0.1',
    databaseUrl: required('DATABASE_URL'),
    poolSize: Number(env.DATABASE_POOL_SIZE ?? 10),
    adminToken: required('ADMIN_API_TOKEN'),
    redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    redisKeyPrefix: env.REDIS_KEY_PREFIX ?? 'node-idempotency',
  };
}
