/**
 * The process configuration, parsed once from the environment at boot. Nothing else reads
 * process.env. Every problem is reported at once, naming the variable.
 */
export interface AppConfig {
  port: number;
  host: string;
  /** undefined → embedded PostgreSQL under `dataDir` */
  databaseUrl: string | undefined;
  dataDir: string;
  databasePoolSize: number;
  adminApiToken: string | undefined;
  idempotencyKeyTtlSeconds: number;
  requestBodyLimitBytes: number;
  seedDemoCompany: boolean;
  logLevel: 'error' | 'warn' | 'log' | 'debug';
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env): AppConfig {
  const problems: string[] = [];
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  };
  const boolean = (name: string, fallback: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  };
  const optional = (name: string): string | undefined => {
    const raw = env[name];
    return raw === undefined || raw === '' ? undefined : raw;
  };

  const databaseUrl = optional('DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  const adminApiToken = optional('ADMIN_API_TOKEN');
  if (adminApiToken !== undefined && adminApiToken.length < 16) {
    problems.push('ADMIN_API_TOKEN must be at least 16 characters');
  }
  const logLevel = optional('LOG_LEVEL') ?? 'log';
  if (!['error', 'warn', 'log', 'debug'].includes(logLevel)) {
    problems.push('LOG_LEVEL must be one of error, warn, log, debug');
  }

  const config: AppConfig = {
    port: integer('PORT', 3000, 0, 65535),
    host: optional('HOST') ?? '127.0.0.1',
    databaseUrl,
    dataDir: optional('DATA_DIR') ?? '.data',
    databasePoolSize: integer('DATABASE_POOL_SIZE', 10, 1, 200),
    adminApiToken,
    idempotencyKeyTtlSeconds: integer('IDEMPOTENCY_KEY_TTL', 86_400, 1, 31 * 86_400),
    requestBodyLimitBytes: integer('REQUEST_BODY_LIMIT_BYTES', 1_048_576, 1024, 16 * 1_048_576),
    seedDemoCompany: boolean('SEED_DEMO_COMPANY', true),
    logLevel: logLevel as AppConfig['logLevel'],
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

export const APP_CONFIG = Symbol('APP_CONFIG');
