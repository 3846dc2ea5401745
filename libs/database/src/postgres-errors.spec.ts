import { QueryFailedError } from 'typeorm';
import { isConnectionLoss, isTransientDatabaseFailure } from './postgres-errors';

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

describe('isTransientDatabaseFailure', () => {
  it.each([
    ['a statement timeout (lock wait)', '57014', 'canceling statement due to statement timeout'],
    ['a lock timeout', '55P03', 'canceling statement due to lock timeout'],
    ['a serialization failure', '40001', 'could not serialize access due to concurrent update'],
    ['a deadlock', '40P01', 'deadlock detected'],
    ['a prepared plan a migration changed', '0A000', 'cached plan must not change result type'],
  ])('recognises %s, also inside TypeORM and cause wrappers', (_name, code, message) => {
    const driverError = Object.assign(new Error(message), { code });
    expect(isTransientDatabaseFailure(driverError)).toBe(true);
    expect(isTransientDatabaseFailure(new QueryFailedError('SELECT 1', [], driverError))).toBe(true);
    expect(isTransientDatabaseFailure(new Error('commit failed', { cause: driverError }))).toBe(true);
  });

  it('recognises a changed prepared plan by the server routine when the message is localized', () => {
    const driverError = Object.assign(new Error('el plan almacenado no debe cambiar el tipo de resultado'), {
      code: '0A000',
      routine: 'RevalidateCachedQuery',
    });
    expect(isTransientDatabaseFailure(new QueryFailedError('SELECT 1', [], driverError))).toBe(true);
  });

  it('includes connection loss', () => {
    expect(isTransientDatabaseFailure(new Error('Connection terminated unexpectedly'))).toBe(true);
  });

  it.each([
    ['a unique violation', Object.assign(new Error('duplicate key'), { code: '23505' })],
    ['a check violation', Object.assign(new Error('violates check constraint'), { code: '23514' })],
    ['an undefined table', Object.assign(new Error('relation does not exist'), { code: '42P01' })],
    ['another unsupported feature', Object.assign(new Error('not supported'), { code: '0A000' })],
    ['a plain error', new Error('boom')],
  ])('does not mistake %s for one', (_name, error) => {
    expect(isTransientDatabaseFailure(error)).toBe(false);
  });
});
