import { fingerprintOf } from './fingerprint';
import type { KeyClaim } from './idempotency-ports';
import type { IdempotencyRecord } from './idempotency-record';
import { decide, isExpired } from './idempotency-state-machine';

const NOW = new Date('2026-11-30T12:00:00.000Z');
const SAME = fingerprintOf({ amount: 1 });
const OTHER = fingerprintOf({ amount: 2 });
const later = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);

const base = { fingerprint: SAME, expiresAt: later(60), attempt: 1, recoveryPoint: null };
const response = { status: 201, headers: {}, body: '{}', sealed: false };
const records = {
  completed: { ...base, state: 'completed', response },
  failedFinal: { ...base, state: 'failed_final', response: { ...response, status: 409 } },
  expired: { ...base, state: 'completed', response, expiresAt: NOW },
  leased: { ...base, state: 'in_progress', leaseExpiresAt: later(1) },
  leaseExpired: { ...base, state: 'in_progress', leaseExpiresAt: NOW, expiresAt: later(-3600) },
  failedRetryable: { ...base, state: 'failed_retryable' },
} satisfies Record<string, IdempotencyRecord>;

describe('decide', () => {
  it.each<[string, KeyClaim, Buffer, string]>([
    ['no record, lock held', { held: true, record: null }, SAME, 'execute'],
    ['lock held by another transaction', { held: false, record: null }, SAME, 'reject_busy'],
    ['completed, same payload', { held: false, record: records.completed }, SAME, 'replay'],
    ['failed_final, same payload', { held: false, record: records.failedFinal }, SAME, 'replay'],
    ['completed, other payload', { held: false, record: records.completed }, OTHER, 'reject_mismatch'],
    ['expired, other payload, lock held', { held: true, record: records.expired }, OTHER, 'execute'],
    ['expired, lock not held', { held: false, record: records.expired }, SAME, 'reject_busy'],
    ['in_progress, lease running', { held: false, record: records.leased }, SAME, 'reject_busy'],
    ['in_progress, lease running, lock held', { held: true, record: records.leased }, SAME, 'reject_busy'],
    ['in_progress, other payload', { held: false, record: records.leased }, OTHER, 'reject_mismatch'],
    ['in_progress, lease expired, lock held', { held: true, record: records.leaseExpired }, SAME, 'resume'],
    [
      'in_progress, lease expired, lock not held',
      { held: false, record: records.leaseExpired },
      SAME,
      'reject_busy',
    ],
    ['failed_retryable, lock held', { held: true, record: records.failedRetryable }, SAME, 'resume'],
    [
      'failed_retryable, lock not held',
      { held: false, record: records.failedRetryable },
      SAME,
      'reject_busy',
    ],
  ])('%s → %s', (_name, claim, fingerprint, action) => {
    expect(decide(claim, fingerprint, NOW).action).toBe(action);
  });

  it('hands the record to replay and resume', () => {
    expect(decide({ held: false, record: records.completed }, SAME, NOW)).toEqual({
      action: 'replay',
      record: records.completed,
    });
    expect(decide({ held: true, record: records.failedRetryable }, SAME, NOW)).toEqual({
      action: 'resume',
      record: records.failedRetryable,
    });
  });
});

describe('isExpired', () => {
  it('a finished record expires at expiresAt; an unfinished one never does', () => {
    expect(isExpired(records.completed, NOW)).toBe(false);
    expect(isExpired(records.expired, NOW)).toBe(true);
    expect(isExpired(records.leaseExpired, later(86_400))).toBe(false);
    expect(isExpired(records.failedRetryable, later(86_400))).toBe(false);
  });
});
