import { ConfigError, EnvReader, throwOnProblems } from './env-reader';
import { nestLogLevels, parseProcessConfig } from './process-config';

describe('EnvReader', () => {
  it('treats empty as unset and reads integers, booleans and choices within their bounds', () => {
    const reader = new EnvReader({ EMPTY: '', N: '42', B: '0', C: 'warn' });
    expect(reader.optional('EMPTY')).toBeUndefined();
    expect(reader.integer('EMPTY', 7, 1, 10)).toBe(7);
    expect(reader.integer('N', 7, 1, 100)).toBe(42);
    expect(reader.boolean('B', true)).toBe(false);
    expect(reader.oneOf('C', ['error', 'warn'], 'error')).toBe('warn');
    expect(reader.parsed({}).problems).toEqual([]);
  });

  it('records every bad value, naming the variable, and goes on with the default', () => {
    const reader = new EnvReader({ N: '1e3', M: '101', B: 'yes', C: 'loud' });
    expect(reader.integer('N', 7, 1, 10_000)).toBe(7);
    expect(reader.integer('M', 7, 1, 100)).toBe(7);
    expect(reader.boolean('B', true)).toBe(true);
    expect(reader.oneOf('C', ['error', 'warn'], 'error')).toBe('error');
    reader.problem('X needs Y');
    expect(reader.parsed({ ok: 1 })).toEqual({
      options: { ok: 1 },
      problems: [
        'N must be an integer from 1 to 10000 (got "1e3")',
        'M must be an integer from 1 to 100 (got "101")',
        'B must be true or false (got "yes")',
        'C must be one of error, warn',
        'X needs Y',
      ],
    });
  });

  it('lets a test switch be read only with NODE_ENV=test, and refuses it set to anything elsewhere', () => {
    expect(new EnvReader({ NODE_ENV: 'production' }).testSwitch('T', 'turns X off')).toBe(false);
    expect(new EnvReader({ T: '', NODE_ENV: 'production' }).testSwitch('T', 'turns X off')).toBe(false);
    expect(new EnvReader({ T: '1', NODE_ENV: 'test' }).testSwitch('T', 'turns X off')).toBe(true);
    for (const env of [{ T: '1' }, { T: '0', NODE_ENV: 'production' }, { T: '1', NODE_ENV: 'TEST' }]) {
      const reader = new EnvReader(env);
      expect(reader.testSwitch('T', 'turns X off')).toBe(false);
      expect(reader.parsed({}).problems).toEqual([
        'T turns X off: for tests and benchmarks only, refused unless NODE_ENV=test',
      ]);
    }
  });

  it('throwOnProblems lists the problems of all parts at once', () => {
    expect(() => throwOnProblems({ problems: [] }, { problems: [] })).not.toThrow();
    const error = (() => {
      try {
        throwOnProblems({ problems: ['A is bad'] }, { problems: [] }, { problems: ['B is bad'] });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual(['A is bad', 'B is bad']);
    expect((error as ConfigError).message).toBe('Invalid configuration:\n  - A is bad\n  - B is bad');
  });
});

describe('process configuration', () => {
  it('reads LOG_LEVEL and SHUTDOWN_TIMEOUT_MS; a level lets through itself and what is more severe', () => {
    expect(parseProcessConfig({})).toEqual({
      options: { logLevel: 'log', shutdownTimeoutMs: 10_000 },
      problems: [],
    });
    expect(parseProcessConfig({ LOG_LEVEL: 'warn', SHUTDOWN_TIMEOUT_MS: '2000' }).options).toEqual({
      logLevel: 'warn',
      shutdownTimeoutMs: 2000,
    });
    expect(nestLogLevels('error')).toEqual(['error']);
    expect(nestLogLevels('log')).toEqual(['error', 'warn', 'log']);
    expect(nestLogLevels('debug')).toEqual(['error', 'warn', 'log', 'debug']);
  });
});
