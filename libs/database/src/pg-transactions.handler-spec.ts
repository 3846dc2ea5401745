import { randomUUID } from 'node:crypto';
import { startRoundTripCounter, type RoundTripCounter } from '../../../test/support/round-trip-counter';
import { testDatabasePool, testDatabaseUrl } from '../../../test/support/test-database';
import { inTransaction } from './pg-transactions';
import { isTransientDatabaseFailure } from './postgres-errors';
import { DatabasePool, type Sql } from './sql';

const TABLE = `pg_tx_${randomUUID().slice(0, 8)}`;
const CHILDREN = `${TABLE}_children`;
const APPLICATION = 'ledgerkey-pg-transactions-test';
const db = testDatabasePool();
const open: DatabasePool[] = [];
let counter: RoundTripCounter;

/** A pool of one connection (every statement meets the same session), its round trips counted. */
function onePool(preparedStatements?: number): DatabasePool {
  const options = { url: counter.url, poolSize: 1, applicationName: APPLICATION, preparedStatements };
  open.push(new DatabasePool(options));
  return open[open.length - 1];
}

/** The round trips `work` took, once the pool's connection is up. */
async function roundTripsOf(pool: DatabasePool, work: () => Promise<unknown>): Promise<number> {
  await pool.query('SELECT 1');
  counter.reset();
  await work();
  return counter.roundTrips;
}

const insertOf = (id: string) => ({ text: `INSERT INTO ${TABLE} (id) VALUES ($1)`, values: [id] });
const insert = (sql: Sql, id: string) => sql.query(insertOf(id).text, insertOf(id).values);

const READ = `SELECT id FROM ${TABLE} WHERE id = ANY($1) ORDER BY id`;
const stored = async (ids: string[]) =>
  (await db.query<{ id: string }>(READ, [ids])).rows.map(({ id }) => id);
const PREPARED = 'SELECT statement FROM pg_prepared_statements ORDER BY prepare_time';
const preparedOn = async (pool: DatabasePool) =>
  (await pool.query<{ statement: string }>(PREPARED)).map(({ statement }) => statement);

beforeAll(async () => {
  counter = await startRoundTripCounter(testDatabaseUrl(), APPLICATION);
  await db.query(`CREATE TABLE ${TABLE} (id uuid PRIMARY KEY)`);
  await db.query(`CREATE TABLE ${CHILDREN} (id uuid PRIMARY KEY,
                    parent uuid REFERENCES ${TABLE} (id) DEFERRABLE INITIALLY DEFERRED)`);
});

afterAll(async () => {
  await Promise.all(open.map((pool) => pool.end()));
  await counter.close();
  await db.query(`DROP TABLE IF EXISTS ${CHILDREN}, ${TABLE}`);
  await db.end();
});

describe('a transaction in pipeline mode', () => {
  it('sends BEGIN with the first statement, and the last statement with COMMIT: one round trip each', async () => {
    const pool = onePool();
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    const roundTrips = await roundTripsOf(pool, () =>
      inTransaction(pool, async (tx) => {
        await insert(tx, ids[0]);
        await insert(tx, ids[1]);
        await tx.commit(insertOf(ids[2]));
      }),
    );
    expect(roundTrips).toBe(3);
    expect(await stored(ids)).toEqual([...ids].sort());
    // A transaction that sends nothing sends neither BEGIN nor COMMIT.
    expect(await roundTripsOf(pool, () => inTransaction(pool, () => Promise.resolve()))).toBe(0);
  });

  it('runs the first statement inside the transaction', async () => {
    const pool = onePool();
    // now() is the transaction's start: the same for both statements only inside one transaction.
    const [first, second] = await inTransaction(pool, async (tx) => {
      const at = async (pause: number) =>
        (await tx.query<{ at: string }>('SELECT now()::text AS at, pg_sleep($1::float8)', [pause]))[0].at;
      return [await at(0.02), await at(0)];
    });
    expect(second).toBe(first);
  });

  it('rolls back every statement when a statement fails, and the connection carries on', async () => {
    const pool = onePool();
    const ids = [randomUUID(), randomUUID()];
    const failing = inTransaction(pool, async (tx) => {
      await insert(tx, ids[0]);
      await insert(tx, ids[0]);
    });
    await expect(failing).rejects.toMatchObject({ driverError: { code: '23505' } });
    expect(await stored(ids)).toEqual([]);
    await inTransaction(pool, (tx) => insert(tx, ids[1]));
    expect(await stored(ids)).toEqual([ids[1]]);
  });

  it('sends what waits (sendBeforeNext) in front of the next statement, in its round trip', async () => {
    const pool = onePool();
    const id = randomUUID();
    let seen: unknown[] = [];
    const roundTrips = await roundTripsOf(pool, () =>
      inTransaction(pool, async (tx) => {
        const waiting = [insertOf(id)];
        tx.sendBeforeNext(() => waiting.pop());
        seen = await tx.query(`SELECT id FROM ${TABLE} WHERE id = $1`, [id]);
      }),
    );
    expect(seen).toEqual([{ id }]);
    // BEGIN, the waiting INSERT and the SELECT; then COMMIT.
    expect(roundTrips).toBe(2);
  });
});

describe('COMMIT with the last statement', () => {
  it('commits nothing when the last statement fails, and rejects with its own error', async () => {
    const pool = onePool();
    const ids = [randomUUID(), randomUUID()];
    await insert(pool, ids[0]);
    const own = new Error('the batch failed');
    const failing = inTransaction(pool, async (tx) => {
      await insert(tx, ids[1]);
      await tx.commit({ ...insertOf(ids[0]), errorOf: () => own });
    });
    await expect(failing).rejects.toBe(own);
    expect(await stored(ids)).toEqual([ids[0]]);
  });

  it('fails with the COMMIT when a deferred constraint fails, and commits nothing', async () => {
    const pool = onePool();
    const id = randomUUID();
    // The foreign key is checked at COMMIT: the parent does not exist.
    const orphan = {
      text: `INSERT INTO ${CHILDREN} (id, parent) VALUES ($1, $2)`,
      values: [id, randomUUID()],
    };
    const failing = inTransaction(pool, async (tx) => {
      await insert(tx, id);
      await tx.commit(orphan);
    });
    await expect(failing).rejects.toMatchObject({ code: '23503' });
    expect(await stored([id])).toEqual([]);
  });

  it('refuses any statement after it (it would run outside the transaction)', async () => {
    const pool = onePool();
    const ids = [randomUUID(), randomUUID()];
    const failing = inTransaction(pool, async (tx) => {
      await tx.commit(insertOf(ids[0]));
      await insert(tx, ids[1]);
    });
    await expect(failing).rejects.toThrow(/its transaction committed already/);
    expect(await stored(ids)).toEqual([ids[0]]);
  });
});

describe('named prepared statements', () => {
  it('prepares a parameterized statement once per connection and reuses it', async () => {
    const pool = onePool();
    const text = `SELECT count(*)::int AS n FROM ${TABLE} WHERE id = $1`;
    await pool.query(text, [randomUUID()]);
    await inTransaction(pool, (tx) => tx.query(text, [randomUUID()]));
    expect(await preparedOn(pool)).toEqual([text]);
  });

  it('names at most the configured number of texts and still runs the rest; none when switched off', async () => {
    const texts = [1, 2, 3].map((n) => `SELECT ${n} AS variant, $1::int AS v`);
    const [limited, off] = [onePool(2), onePool(0)];
    for (const text of texts)
      expect([await limited.query(text, [2]), await off.query(text, [2])]).toHaveLength(2);
    expect(await preparedOn(limited)).toEqual(texts.slice(0, 2));
    expect(await preparedOn(off)).toEqual([]);
  });

  it('treats a plan that a migration changed under it as transient and prepares it afresh', async () => {
    const pool = onePool();
    const [parent, id] = [randomUUID(), randomUUID()];
    await db.query(`INSERT INTO ${TABLE} (id) VALUES ($1)`, [parent]);
    await db.query(`INSERT INTO ${CHILDREN} (id, parent) VALUES ($1, $2)`, [id, parent]);
    const text = `SELECT * FROM ${CHILDREN} WHERE id = $1`;
    expect(await pool.query(text, [id])).toEqual([{ id, parent }]);
    // Another instance's migration adds a column: the prepared statement's result columns change.
    await db.query(`ALTER TABLE ${CHILDREN} ADD COLUMN extra int NOT NULL DEFAULT 7`);

    const stale = await inTransaction(pool, (tx) => tx.query(text, [id])).catch((error: unknown) => error);
    expect(stale).toMatchObject({ driverError: { code: '0A000', routine: 'RevalidateCachedQuery' } });
    expect(isTransientDatabaseFailure(stale)).toBe(true);
    expect(await inTransaction(pool, (tx) => tx.query(text, [id]))).toEqual([{ id, parent, extra: 7 }]);
  });
});
