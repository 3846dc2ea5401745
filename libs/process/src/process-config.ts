import { type Env, EnvReader, type ParsedConfig } from './env-reader';

export const LOG_LEVELS = ['error', 'warn', 'log', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** What every process reads, whatever else it does. */
export interface ProcessConfig {
  /** LOG_LEVEL: the least severe level logged. */
  logLevel: LogLevel;
  /** SHUTDOWN_TIMEOUT_MS: a stop (SIGTERM, SIGINT) ends the process within this bound, whatever the database does. */
  shutdownTimeoutMs: number;
}

export function parseProcessConfig(env: Env): ParsedConfig<ProcessConfig> {
  const reader = new EnvReader(env);
  return reader.parsed({
    logLevel: reader.oneOf('LOG_LEVEL', LOG_LEVELS, 'log'),
    shutdownTimeoutMs: reader.integer('SHUTDOWN_TIMEOUT_MS', 10_000, 1000, 600_000),
  });
}

/** The Nest logger levels that LOG_LEVEL `level` lets through: it and every more severe one. */
export function nestLogLevels(level: LogLevel): LogLevel[] {
  return LOG_LEVELS.slice(0, LOG_LEVELS.indexOf(level) + 1);
}
