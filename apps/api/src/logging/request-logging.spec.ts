import { Writable } from 'node:stream';
import { pino } from 'pino';
import { pinoLevelOf } from '@ledgerkey/process';
import { createRootLogger, errorForLog } from './request-logging';

describe('pinoLevelOf', () => {
  it.each([
    ['error', 'error'],
    ['warn', 'warn'],
    ['log', 'info'],
    ['debug', 'debug'],
  ] as const)('maps LOG_LEVEL=%s to pino %s', (logLevel, pinoLevel) => {
    expect(pinoLevelOf(logLevel)).toBe(pinoLevel);
  });
});

describe('createRootLogger', () => {
  it('at LOG_LEVEL=error, writes errors only (request lines are info)', () => {
    const logger = createRootLogger('error');
    expect(logger.isLevelEnabled('error')).toBe(true);
    expect(logger.isLevelEnabled('warn')).toBe(false);
    expect(logger.isLevelEnabled('info')).toBe(false);
  });

  it('at LOG_LEVEL=log, writes request lines but not debug', () => {
    const logger = createRootLogger('log');
    expect(logger.isLevelEnabled('info')).toBe(true);
    expect(logger.isLevelEnabled('debug')).toBe(false);
  });
});

describe('errorForLog', () => {
  it('keeps type, message and stack with the cause chain, and a string code', () => {
    const cause = Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' });
    const error = Object.assign(new Error('The database is not reachable.', { cause }), {
      code: 'service_unavailable',
    });
    const logged = errorForLog(error) as Record<string, string>;
    expect(logged).toEqual({
      type: 'Error',
      message: 'The database is not reachable.: connection refused',
      stack: expect.stringContaining('caused by: Error: connection refused'),
      code: 'service_unavailable',
    });
  });

  it('drops every other field: a database error carries the statement and its parameters', () => {
    class QueryFailedError extends Error {
      query = 'INSERT INTO invoices …';
      parameters = ['UAB Pirkėjas', 12100];
      driverError = new Error('boom');
    }
    expect(Object.keys(errorForLog(new QueryFailedError('boom')) as object).sort()).toEqual([
      'message',
      'stack',
      'type',
    ]);
  });

  it('passes a thrown non-error through', () => {
    expect(errorForLog('a string')).toBe('a string');
  });

  it('is the serializer of `err` in every log line', () => {
    let output = '';
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        output += chunk.toString();
        done();
      },
    });
    const secret = Object.assign(new Error('failed'), { parameters: ['secret-value'] });
    pino({ serializers: { err: errorForLog } }, sink).error({ err: secret }, 'x');
    expect(output).toContain('"message":"failed"');
    expect(output).not.toContain('secret-value');
  });
});
