import { createHash } from 'node:crypto';
import { IdleCollector } from '@ledgerkey/process';
import type { IdempotencyKeyRef, RecordedResponse } from './idempotency-record';
import {
  REPLAY_CACHE_ENTRY_OVERHEAD_BYTES,
  ReplayCache,
  inStoredHeaderOrder,
  replayCacheBytesOf,
} from './replay-cache';

const NOW = new Date('2026-12-01T12:00:00.000Z');
const later = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
const digestOf = (bytes: string) => createHash('sha256').update(bytes).digest();
const BYTES = digestOf('{"amount":100}');

const refOf = (key: string): IdempotencyKeyRef => ({
  tenantId: '7f1c4a52-0000-4000-8000-000000000001',
  operation: 'test.things.create',
  key,
});

const answerOf = (body: string): RecordedResponse => ({
  status: 201,
  headers: { 'Content-Type': 'application/json; charset=utf-8', 'Idempotent-Replayed': 'true' },
  body,
});

/** The bytes one entry of `answerOf(body)` under `refOf(key)` is counted for. */
const bytesOf = (key: string, body: string) =>
  replayCacheBytesOf(`${refOf(key).tenantId}\n${refOf(key).operation}\n${key}`, answerOf(body));

describe('ReplayCache', () => {
  it('answers the same bytes of the same key until it expires, then drops it', () => {
    const cache = new ReplayCache({ maxEntries: 10, maxBytes: 1 << 20 });
    cache.remember(refOf('a'), BYTES, answerOf('{"id":1}'), later(60));

    expect(cache.find(refOf('a'), BYTES, NOW)).toEqual(answerOf('{"id":1}'));
    expect(cache.find(refOf('a'), BYTES, later(59.999))).toEqual(answerOf('{"id":1}'));
    expect(cache.find(refOf('a'), BYTES, later(60))).toBeNull();
    expect(cache.size).toBe(0);
    expect(cache.byteSize).toBe(0);
  });

  it('holds a key, whatever its bytes, until it expires; not another key, tenant or operation', () => {
    const cache = new ReplayCache({ maxEntries: 10, maxBytes: 1 << 20 });
    cache.remember(refOf('a'), BYTES, answerOf('{"id":1}'), later(60));

    expect(cache.holds(refOf('a'), NOW)).toBe(true);
    expect(cache.holds(refOf('a'), later(59.999))).toBe(true);
    expect(cache.holds(refOf('a'), later(60))).toBe(false);
    expect(cache.holds(refOf('b'), NOW)).toBe(false);
    expect(cache.holds({ ...refOf('a'), tenantId: '7f1c4a52-0000-4000-8000-000000000002' }, NOW)).toBe(false);
    expect(cache.holds({ ...refOf('a'), operation: 'test.other.create' }, NOW)).toBe(false);
  });

  it('other bytes, another key, tenant or operation find nothing; the entry stays', () => {
    const cache = new ReplayCache({ maxEntries: 10, maxBytes: 1 << 20 });
    cache.remember(refOf('a'), BYTES, answerOf('{"id":1}'), later(60));

    expect(cache.find(refOf('a'), digestOf(' {"amount":100}'), NOW)).toBeNull();
    expect(cache.find(refOf('b'), BYTES, NOW)).toBeNull();
    expect(
      cache.find({ ...refOf('a'), tenantId: '7f1c4a52-0000-4000-8000-000000000002' }, BYTES, NOW),
    ).toBeNull();
    expect(cache.find({ ...refOf('a'), operation: 'test.other.create' }, BYTES, NOW)).toBeNull();
    expect(cache.find(refOf('a'), BYTES, NOW)).not.toBeNull();
  });

  it('hands out copies: a caller changing an answer changes nothing kept', () => {
    const cache = new ReplayCache({ maxEntries: 10, maxBytes: 1 << 20 });
    const remembered = answerOf('{"id":1}');
    cache.remember(refOf('a'), BYTES, remembered, later(60));
    remembered.headers.Location = '/changed';

    const found = cache.find(refOf('a'), BYTES, NOW)!;
    found.headers['X-Changed'] = 'yes';

    expect(cache.find(refOf('a'), BYTES, NOW)).toEqual(answerOf('{"id":1}'));
  });

  it('keeps at most maxEntries, evicting the least recently used', () => {
    const cache = new ReplayCache({ maxEntries: 2, maxBytes: 1 << 20 });
    cache.remember(refOf('a'), BYTES, answerOf('a'), later(60));
    cache.remember(refOf('b'), BYTES, answerOf('b'), later(60));
    cache.find(refOf('a'), BYTES, NOW); // a is now more recent than b
    cache.remember(refOf('c'), BYTES, answerOf('c'), later(60));

    expect(cache.size).toBe(2);
    expect(cache.find(refOf('b'), BYTES, NOW)).toBeNull();
    expect(cache.find(refOf('a'), BYTES, NOW)?.body).toBe('a');
    expect(cache.find(refOf('c'), BYTES, NOW)?.body).toBe('c');
  });

  it('keeps at most maxBytes, counting 2 bytes a character plus the overhead of an entry', () => {
    const body = 'x'.repeat(1000);
    const one = bytesOf('a', body);
    expect(one).toBeGreaterThan(2 * body.length + REPLAY_CACHE_ENTRY_OVERHEAD_BYTES);
    const cache = new ReplayCache({ maxEntries: 100, maxBytes: 2 * one + 10 });
    for (const key of ['a', 'b', 'c']) cache.remember(refOf(key), BYTES, answerOf(body), later(60));

    expect(cache.size).toBe(2);
    expect(cache.byteSize).toBe(2 * one);
    expect(cache.find(refOf('a'), BYTES, NOW)).toBeNull();
  });

  it('does not keep an answer larger than maxBytes, nor anything with maxEntries 0', () => {
    const large = new ReplayCache({ maxEntries: 100, maxBytes: bytesOf('a', 'x'.repeat(100)) - 1 });
    large.remember(refOf('a'), BYTES, answerOf('x'.repeat(100)), later(60));
    expect(large.size).toBe(0);

    const off = new ReplayCache({ maxEntries: 0, maxBytes: 1 << 20 });
    off.remember(refOf('a'), BYTES, answerOf('{}'), later(60));
    expect(off.find(refOf('a'), BYTES, NOW)).toBeNull();
  });

  it('keeps nothing outside the heap: an entry pins no Buffer pool slab', () => {
    const gc = IdleCollector.fullCollection();
    const cache = new ReplayCache({ maxEntries: 5000, maxBytes: 1 << 30 });
    gc();
    const before = process.memoryUsage().arrayBuffers;
    for (let i = 0; i < 4000; i += 1) {
      cache.remember(refOf(`k${i}`), digestOf(`{"n":${i}}`), answerOf('{}'), later(60));
      // What a request allocates between two answers: pooled Buffers of its own.
      Buffer.from('x'.repeat(4000));
    }
    gc();
    expect(cache.size).toBe(4000);
    // A copied digest Buffer would be a slice of an 8 KiB slab: about 16 MB here.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(1024 * 1024);
  });

  it('a key remembered again replaces its entry and its bytes', () => {
    const cache = new ReplayCache({ maxEntries: 10, maxBytes: 1 << 20 });
    cache.remember(refOf('a'), BYTES, answerOf('first'), later(60));
    cache.remember(refOf('a'), digestOf('other'), answerOf('second, longer'), later(120));

    expect(cache.size).toBe(1);
    expect(cache.byteSize).toBe(bytesOf('a', 'second, longer'));
    expect(cache.find(refOf('a'), BYTES, NOW)).toBeNull();
    expect(cache.find(refOf('a'), digestOf('other'), later(90))?.body).toBe('second, longer');
  });
});

describe('inStoredHeaderOrder', () => {
  it('orders names as jsonb keeps object keys: shorter first, then bytewise', () => {
    const ordered = inStoredHeaderOrder({
      'Content-Type': 'application/json',
      Location: '/v1/x',
      'Retry-After': '1',
      ETag: '"1"',
      'Cache-Control': 'no-store',
    });
    expect(Object.keys(ordered)).toEqual([
      'ETag',
      'Location',
      'Retry-After',
      'Content-Type',
      'Cache-Control',
    ]);
    expect(ordered).toEqual({
      'Content-Type': 'application/json',
      Location: '/v1/x',
      'Retry-After': '1',
      ETag: '"1"',
      'Cache-Control': 'no-store',
    });
  });
});
