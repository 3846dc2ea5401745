import { Writable } from 'node:stream';
import { Logger } from '@nestjs/common';
import { JsonLogger } from './json-logger';

function sink(): { stream: Writable; lines(): Array<Record<string, unknown>> } {
  let output = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      output += chunk.toString();
      done();
    },
  });
  return {
    stream,
    lines: () =>
      output
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe('JsonLogger', () => {
  afterEach(() => Logger.overrideLogger(false));

  it("writes Nest's log calls as the API's JSON lines: level word, ISO time, context, msg", () => {
    const { stream, lines } = sink();
    Logger.overrideLogger(new JsonLogger('log', stream as never));
    new Logger('ledgerkey').log('DATABASE_URL not set: using embedded PostgreSQL');
    new Logger('ledgerkey').debug('not at LOG_LEVEL=log');
    new Logger('Secrets').warn('SECRETS_KEY is not set');
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 'info',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        context: 'ledgerkey',
        msg: 'DATABASE_URL not set: using embedded PostgreSQL',
        pid: process.pid,
      }),
      expect.objectContaining({ level: 'warn', context: 'Secrets', msg: 'SECRETS_KEY is not set' }),
    ]);
  });

  it('logs an error with type, message and stack only (no statement parameters)', () => {
    const { stream, lines } = sink();
    const error = Object.assign(new Error('insert failed'), { parameters: ['secret-value'] });
    new JsonLogger('error', stream as never).error(error, 'ledgerkey');
    expect(JSON.stringify(lines())).not.toContain('secret-value');
    expect(lines()[0]).toMatchObject({
      level: 'error',
      context: 'ledgerkey',
      msg: 'insert failed',
      err: { type: 'Error', message: 'insert failed', stack: expect.stringContaining('insert failed') },
    });
  });

  it("takes Nest's (message, stack, context) for errors", () => {
    const { stream, lines } = sink();
    new JsonLogger('error', stream as never).error(
      'stop failed',
      'Error: stop failed\n    at x',
      'ledgerkey',
    );
    expect(lines()[0]).toMatchObject({ context: 'ledgerkey', msg: 'stop failed', stack: expect.any(String) });
  });

  it('announces a start whatever LOG_LEVEL says', () => {
    const { stream, lines } = sink();
    const logger = new JsonLogger('error', stream as never);
    logger.log('not at LOG_LEVEL=error');
    logger.announce('ledgerkey-worker', 'ledgerkey worker started (pid 1, concurrency 5)', {
      concurrency: 5,
    });
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 'info',
        context: 'ledgerkey-worker',
        concurrency: 5,
        msg: 'ledgerkey worker started (pid 1, concurrency 5)',
      }),
    ]);
  });
});
