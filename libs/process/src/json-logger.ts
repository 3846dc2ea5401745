import type { LoggerService } from '@nestjs/common';
import { type DestinationStream, type Level, type Logger, type LoggerOptions, pino } from 'pino';
import type { LogLevel } from './process-config';

const PINO_LEVELS: Record<LogLevel, Level> = {
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
};

/** LOG_LEVEL (Nest's names) as a pino level: `log` is pino's `info`. */
export function pinoLevelOf(logLevel: LogLevel): Level {
  return PINO_LEVELS[logLevel];
}

/**
 * The one log format of every ledgerkey process (API, worker, CLI): pino JSON lines with
 * `level` as a word, an ISO `time`, `pid`, `hostname`, the Nest `context` and `msg`. The API's
 * request logger adds its serializers to these options.
 */
export function jsonLogOptions(logLevel: LogLevel): LoggerOptions {
  return {
    level: pinoLevelOf(logLevel),
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
}

/**
 * Nest's logger interface over a pino logger, for what a process logs before (or without) an HTTP
 * application: boot lines, the standalone worker, the CLI (which logs to stderr: its stdout is its
 * output). Lines look like the API's, where nestjs-pino does the same.
 */
export class JsonLogger implements LoggerService {
  readonly pino: Logger;

  constructor(logLevel: LogLevel, destination: DestinationStream = process.stdout) {
    this.pino = pino({ ...jsonLogOptions(logLevel), serializers: { err: errorFields } }, destination);
  }

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }

  error(message: unknown, ...rest: unknown[]): void {
    // Nest passes (message, stack?, context?).
    const [stack, context] = rest.length >= 2 ? rest : [undefined, rest[0]];
    if (message instanceof Error) {
      this.pino.error({ context: contextOf([context]), err: message }, message.message);
      return;
    }
    this.pino.error(
      { context: contextOf([context]), ...(typeof stack === 'string' ? { stack } : {}) },
      String(message),
    );
  }

  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }

  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }

  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  /**
   * A line printed whatever LOG_LEVEL says, at `info`: what an operator waits for (a process
   * started), like the API's start banner.
   */
  announce(context: string, message: string, fields: Record<string, unknown> = {}): void {
    this.pino.child({ context, ...fields }, { level: 'info' }).info(message);
  }

  private write(level: Level, message: unknown, rest: unknown[]): void {
    const context = contextOf(rest);
    if (typeof message === 'object' && message !== null && !(message instanceof Error)) {
      this.pino[level]({ context, ...message });
      return;
    }
    this.pino[level]({ context }, String(message));
  }
}

/** Type, message and stack only: a database error's other fields carry the statement's parameters. */
function errorFields(error: unknown): unknown {
  return error instanceof Error ? { type: error.name, message: error.message, stack: error.stack } : error;
}

function contextOf(rest: unknown[]): string | undefined {
  const last = rest.at(-1);
  return typeof last === 'string' ? last : undefined;
}
