import { type LogLevel, LOG_LEVELS } from '@ledgerkey/process';

/**
 * Plain lines on stderr (`provider-sandbox <level>: …`), filtered by LOG_LEVEL; stdout carries only
 * the start lines. Also the logger `stopOnSignals` reports to.
 */
export class SandboxLogger {
  constructor(private readonly level: LogLevel) {}

  error(message: unknown): void {
    this.write('error', message);
  }

  warn(message: unknown): void {
    this.write('warn', message);
  }

  log(message: unknown): void {
    this.write('log', message);
  }

  debug(message: unknown): void {
    this.write('debug', message);
  }

  private write(level: LogLevel, message: unknown): void {
    if (LOG_LEVELS.indexOf(level) > LOG_LEVELS.indexOf(this.level)) return;
    process.stderr.write(`provider-sandbox ${level}: ${String(message)}\n`);
  }
}
