export { ConfigError, EnvReader, throwOnProblems } from './env-reader';
export type { Env, ParsedConfig } from './env-reader';
export { LOG_LEVELS, nestLogLevels, parseProcessConfig } from './process-config';
export type { LogLevel, ProcessConfig } from './process-config';
export { shutdown, stopOnSignals } from './shutdown';
export type { ShutdownOptions, ShutdownPhase, ShutdownStep } from './shutdown';
export { JsonLogger, jsonLogOptions, pinoLevelOf } from './json-logger';
export { IdleCollector } from './idle-collector';
export type { IdleCollectorOptions } from './idle-collector';
