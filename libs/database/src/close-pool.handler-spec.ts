import { Pool } from 'pg';
import { testDatabasePool, testDatabaseUrl } from '../../../test/support/test-database';
import { closing } from './close-pool';

const APPLICATION = `ledgerkey-close-pool-${process.pid}`;
const db = testDatabasePool();

afterAll(() => db.end());

const sessions = async () =>
  Number(
    (
      await db.query<{ count: string }>('SELECT count(*) FROM pg_stat_activity WHERE application_name = $1', [
        APPLICATION,
      ])
    ).rows[0].count,
  );

/** A pool of `size` open connections, and how many of them have ended (the client's `end` event). */
async function openPool(size: number) {
  const pool = new Pool({ connectionString: testDatabaseUrl(), max: size, application_name: APPLICATION });
  const { close } = closing(pool);
  const ended = { count: 0 };
  pool.on('connect', (client) => client.on('end', () => (ended.count += 1)));
  const clients = await Promise.all(Array.from({ length: size }, () => pool.connect()));
  expect(await sessions()).toBe(size);
  return { close, clients, ended };
}

describe('closing(pool)', () => {
  it('resolves once every idle connection is closed (pool.end() alone resolves before their sockets close)', async () => {
    const { close, clients, ended } = await openPool(6);
    for (const client of clients) client.release();
    await close();
    // At once, not after another round trip.
    expect(ended.count).toBe(6);
    expect(await sessions()).toBe(0);
    // Once: a second call waits for the same close.
    await expect(close()).resolves.toBeUndefined();
  });

  it('waits for a connection still checked out when the close starts, and closes it once released', async () => {
    const { close, clients, ended } = await openPool(3);
    for (const client of clients.slice(1)) client.release();
    let closed = false;
    const closure = close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(false);
    expect(await sessions()).toBe(1);
    clients[0].release();
    await closure;
    expect(ended.count).toBe(3);
    expect(await sessions()).toBe(0);
  });

  it('resolves for a pool that never connected', async () => {
    const pool = new Pool({ connectionString: testDatabaseUrl(), application_name: APPLICATION });
    await expect(closing(pool).close()).resolves.toBeUndefined();
  });
});
