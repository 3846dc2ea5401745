import { QueryFailedError } from 'typeorm';
import { isConnectionLoss } from './postgres-errors';

describe('isConnectionLoss', () => {
  it.each([
    [
      'a refused connection',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    ],
    [
      'an admin shutdown',
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    ],
    [
      'a server starting up',
      Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
    ],
    ['a connection exception', Object.assign(new Error('connection failure'), { code: '08006' })],
    ['a socket closed under a client', new Error('Connection terminated unexpectedly')],
    ['a client broken earlier', new Error('Client has encountered a connection error and is not queryable')],
  ])('recognises %s', (_name, error) => {
    expect(isConnectionLoss(error)).toBe(true);
  });

  it('looks through TypeORM and cause wrappers', () => {
    const driverError = Object.assign(new Error('terminating connection'), { code: '57P01' });
    expect(isConnectionLoss(new QueryFailedError('SELECT 1', [], driverError))).toBe(true);
    expect(isConnectionLoss(new Error('commit failed', { cause: driverError }))).toBe(true);
  });

  it.each([
    ['a unique violation', Object.assign(new Error('duplicate key'), { code: '23505' })],
    ['a statement timeout', Object.assign(new Error('canceling statement'), { code: '57014' })],
    ['a plain error', new Error('boom')],
    ['a non-error', 'ECONNREFUSED'],
  ])('does not mistake %s for one', (_name, error) => {
    expect(isConnectionLoss(error)).toBe(false);
  });
});
