import { randomUUID } from 'node:crypto';
import { createDataSource } from '@ledgerkey/database';
import type { Client } from 'pg';
import type { DataSource, EntityManager } from 'typeorm';
import { testDatabasePool, testDatabaseUrl } from '../../../test/support/test-database';
import { BEGIN_STATEMENT } from './pipelined-transactions';
import type { PipeliningClient } from './prepared-statements';

const TABLE = `pipelined_${randomUUID().slice(0, 8)}`;
const DEFERRED = `${TABLE}_deferred`;
const db = testDatabasePool();
const open: DataSource[] = [];

type Connection = Client & PipeliningClient;

/**
 * A DataSource on one connection, and that connection, with a count of its round trips (each
 * ends with the server's ReadyForQuery).
 */
async function oneConnection(): Promise<{
  dataSource: DataSource;
  client: Connection;
  roundTrips: () => number;
}> {
  const dataSource = await createDataSource({
    url: testDatabaseUrl(),
    poolSize: 1,
    applicationName: 'ledgerkey-pipelined-test',
    migrations: [],
  }).initialize();
  open.push(dataSource);
  const runner = dataSource.createQueryRunner();
  const client = (await runner.connect()) as Connection;
  await runner.release();
  let count = 0;
  (client as unknown as { connection: NodeJS.EventEmitter }).connection.on('readyForQuery', () => {
    count += 1;
  });
  return { dataSource, client, roundTrips: () => count };
}

const insert = (manager: EntityManager | DataSource, id: string) =>
  manager.query(`INSERT INTO ${TABLE} (id) VALUES ($1)`, [id]);

async function stored(ids: string[]): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(`SELECT id FROM ${TABLE} WHERE id = ANY($1) ORDER BY id`, [
    ids,
  ]);
  return rows.map(({ id }) => id);
}

async function failureOf(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

beforeAll(async () => {
  await db.query(`CREATE TABLE ${TABLE} (id uuid PRIMARY KEY)`);
  await db.query(
    `CREATE TABLE ${DEFERRED} (id uuid PRIMARY KEY,
       parent uuid REFERENCES ${TABLE} (id) DEFERRABLE INITIALLY DEFERRED)`,
  );
});

afterAll(async () => {
  await Promise.all(open.map((dataSource) => dataSource.destroy()));
  await db.query(`DROP TABLE IF EXISTS ${DEFERRED}, ${TABLE}`);
  await db.end();
});

describe('START TRANSACTION with the first statement', () => {
  it('sends it in front of the first statement: one round trip fewer, after the first transaction', async () => {
    const { dataSource, roundTrips } = await oneConnection();
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    // The connection's first transaction prepares START TRANSACTION: 3 round trips.
    await dataSource.transaction((manager) => insert(manager, ids[0]));
    expect(roundTrips()).toBe(3);
    // Later ones: START TRANSACTION and the INSERT, then COMMIT.
    await dataSource.transaction(async (manager) => {
      await insert(manager, ids[1]);
      await insert(manager, ids[2]);
    });
    expect(roundTrips()).toBe(3 + 3);
    expect(await stored(ids)).toEqual([...ids].sort());
  });

  it('runs the first statement inside the transaction', async () => {
    const { dataSource } = await oneConnection();
    await dataSource.transaction((manager) => insert(manager, randomUUID()));
    // now() is the transaction's start: the same for both statements only inside one transaction.
    const [first, second] = await dataSource.transaction(async (manager) => {
      const at = (pause: number) =>
        manager.query<Array<{ at: string }>>('SELECT now()::text AS at, pg_sleep($1::float8)', [pause]);
      return [(await at(0.02))[0].at, (await at(0))[0].at];
    });
    expect(second).toBe(first);
  });

  it('rolls back every statement when the transaction fails, and the connection carries on', async () => {
    const { dataSource } = await oneConnection();
    await dataSource.transaction((manager) => insert(manager, randomUUID()));
    const ids = [randomUUID(), randomUUID()];
    const failed = await failureOf(
      dataSource.transaction(async (manager) => {
        await insert(manager, ids[0]);
        await insert(manager, ids[0]);
      }),
    );
    expect(failed).toMatchObject({ driverError: { code: '23505' } });
    expect(await stored(ids)).toEqual([]);
    await dataSource.transaction((manager) => insert(manager, ids[1]));
    expect(await stored(ids)).toEqual([ids[1]]);
  });

  it('sends nothing for a transaction without statements', async () => {
    const { dataSource, roundTrips } = await oneConnection();
    await dataSource.transaction((manager) => insert(manager, randomUUID()));
    const before = roundTrips();
    await dataSource.transaction(async () => undefined);
    expect(roundTrips()).toBe(before);
  });

  it('prepares it again when the session lost it (DEALLOCATE, DISCARD)', async () => {
    const { dataSource } = await oneConnection();
    await dataSource.transaction((manager) => insert(manager, randomUUID()));
    await dataSource.query(`DEALLOCATE ${BEGIN_STATEMENT}`);
    const ids = [randomUUID(), randomUUID()];
    const lost = await failureOf(dataSource.transaction((manager) => insert(manager, ids[0])));
    expect(lost).toMatchObject({ driverError: { code: '26000' } });
    await dataSource.transaction((manager) => insert(manager, ids[1]));
    expect(await stored(ids)).toEqual([ids[1]]);
  });

  it('sends it on its own before a statement that cannot carry it (no parameters)', async () => {
    const { dataSource } = await oneConnection();
    await dataSource.transaction((manager) => insert(manager, randomUUID()));
    const id = randomUUID();
    await failureOf(
      dataSource.transaction(async (manager) => {
        await manager.query(`INSERT INTO ${TABLE} (id) VALUES ('${id}')`);
        throw new Error('roll it back');
      }),
    );
    expect(await stored([id])).toEqual([]);
  });
});

describe('COMMIT with the last statement', () => {
  it('commits with the statement: the COMMIT that follows sends nothing', async () => {
    const { dataSource, client, roundTrips } = await oneConnection();
    await dataSource.transaction((manager) => insert(manager, randomUUID()));
    const id = randomUUID();
    const before = roundTrips();
    let visibleBeforeCommit: string[] | undefined;
    await dataSource.transaction(async (manager) => {
      client.commitWithNextStatement();
      await insert(manager, id);
      // Committed already, before TypeORM's COMMIT: another connection sees it.
      visibleBeforeCommit = await stored([id]);
    });
    expect(visibleBeforeCommit).toEqual([id]);
    // START TRANSACTION, the INSERT and COMMIT in one round trip.
    expect(roundTrips() - before).toBe(1);
  });

  it('refuses any statement after it (it would run outside the transaction)', async () => {
    const { dataSource, client } = await oneConnection();
    const ids = [randomUUID(), randomUUID()];
    const failed = await failureOf(
      dataSource.transaction(async (manager) => {
        client.commitWithNextStatement();
        await insert(manager, ids[0]);
        await insert(manager, ids[1]);
      }),
    );
    expect(String(failed)).toMatch(/after its transaction committed/);
    expect(await stored(ids)).toEqual([ids[0]]);
    // The connection is usable again.
    await dataSource.transaction((manager) => insert(manager, ids[1]));
    expect(await stored(ids)).toEqual([...ids].sort());
  });

  it('commits nothing when the statement fails', async () => {
    const { dataSource, client } = await oneConnection();
    const ids = [randomUUID(), randomUUID()];
    await insert(dataSource, ids[0]);
    const failed = await failureOf(
      dataSource.transaction(async (manager) => {
        await insert(manager, ids[1]);
        client.commitWithNextStatement();
        await insert(manager, ids[0]);
      }),
    );
    expect(failed).toMatchObject({ driverError: { code: '23505' } });
    expect(await stored(ids)).toEqual([ids[0]]);
  });

  it('fails with the COMMIT when a deferred constraint fails, and commits nothing', async () => {
    const { dataSource, client } = await oneConnection();
    const ids = [randomUUID(), randomUUID()];
    await dataSource.transaction((manager) => insert(manager, ids[0]));
    const failed = await failureOf(
      dataSource.transaction(async (manager) => {
        await insert(manager, ids[1]);
        client.commitWithNextStatement();
        // The foreign key is checked at COMMIT: the parent does not exist.
        await manager.query(`INSERT INTO ${DEFERRED} (id, parent) VALUES ($1, $2)`, [
          randomUUID(),
          randomUUID(),
        ]);
      }),
    );
    expect(failed).toMatchObject({ driverError: { code: '23503' } });
    expect(await stored(ids)).toEqual([ids[0]]);
    await dataSource.transaction((manager) => insert(manager, ids[1]));
    expect(await stored(ids)).toEqual([...ids].sort());
  });
});

describe('a statement leading the next one', () => {
  // A text of its own: the other statements here are `insert`'s.
  const LEAD = `INSERT INTO ${TABLE} (id) SELECT $1::uuid`;
  const leadInsert = (client: Connection, id: string) => client.lead(LEAD, [id]);

  it("goes in the next statement's round trip, once the connection parsed it", async () => {
    const { dataSource, client, roundTrips } = await oneConnection();
    await dataSource.transaction((manager) => insert(manager, randomUUID()));
    const ids = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];

    // The connection's first lead of this text is parsed on its own first: one round trip more.
    let before = roundTrips();
    const first = await dataSource.transaction(async (manager) => {
      const lead = leadInsert(client, ids[0]);
      await insert(manager, ids[1]);
      return lead;
    });
    expect(roundTrips() - before).toBe(3);
    expect(first?.state).toBe('done');

    before = roundTrips();
    const second = await dataSource.transaction(async (manager) => {
      const lead = leadInsert(client, ids[2]);
      expect(lead?.state).toBe('waiting');
      await insert(manager, ids[3]);
      return lead;
    });
    // START TRANSACTION, the lead and the INSERT; then COMMIT.
    expect(roundTrips() - before).toBe(2);
    expect(second?.state).toBe('done');
    expect(await stored(ids)).toEqual([...ids].sort());
  });

  it("drops the lead's rows: the statement answers its own", async () => {
    const { dataSource, client } = await oneConnection();
    const rows = await dataSource.transaction(async (manager) => {
      client.lead('SELECT g FROM generate_series(1, $1::int) g', [3]);
      return manager.query<Array<{ v: string }>>('SELECT $1::text AS v', ['mine']);
    });
    expect(rows).toEqual([{ v: 'mine' }]);
  });

  it('when it fails, the statement is skipped and fails with its error; nothing commits', async () => {
    const { dataSource, client } = await oneConnection();
    const ids = [randomUUID(), randomUUID()];
    await insert(dataSource, ids[0]);
    let lead: ReturnType<Connection['lead']> = null;
    const failed = await failureOf(
      dataSource.transaction(async (manager) => {
        lead = leadInsert(client, ids[0]);
        await insert(manager, ids[1]);
      }),
    );
    expect(failed).toMatchObject({ driverError: { code: '23505' } });
    expect(lead).toMatchObject({ state: 'failed', error: { code: '23505' } });
    expect(await stored(ids)).toEqual([ids[0]]);
    await dataSource.transaction((manager) => insert(manager, ids[1]));
    expect(await stored(ids)).toEqual([...ids].sort());
  });

  it('goes on its own before a COMMIT that no statement preceded; when it fails, the COMMIT fails', async () => {
    const { dataSource, client } = await oneConnection();
    const id = randomUUID();
    const done = await dataSource.transaction(() => Promise.resolve(leadInsert(client, id)));
    expect(done?.state).toBe('done');
    expect(await stored([id])).toEqual([id]);

    let failing: ReturnType<Connection['lead']> = null;
    const failed = await failureOf(
      dataSource.transaction(() => {
        failing = leadInsert(client, id);
        return Promise.resolve();
      }),
    );
    expect(failed).toMatchObject({ code: '23505' });
    expect(failing).toMatchObject({ state: 'failed' });
    await dataSource.transaction((manager) => insert(manager, randomUUID()));
  });

  it('a ROLLBACK drops it: nothing is sent', async () => {
    const { dataSource, client, roundTrips } = await oneConnection();
    await dataSource.transaction(() => Promise.resolve(leadInsert(client, randomUUID())));
    const id = randomUUID();
    let lead: ReturnType<Connection['lead']> = null;
    const before = roundTrips();
    await failureOf(
      dataSource.transaction(() => {
        lead = leadInsert(client, id);
        return Promise.reject(new Error('roll it back'));
      }),
    );
    expect(lead).toMatchObject({ state: 'dropped' });
    expect(roundTrips() - before).toBe(0);
    expect(await stored([id])).toEqual([]);
  });

  it('goes on its own before a statement that cannot carry it (no parameters), inside the transaction', async () => {
    const { dataSource, client } = await oneConnection();
    await dataSource.transaction((manager) => insert(manager, randomUUID()));
    const ids = [randomUUID(), randomUUID()];
    let lead: ReturnType<Connection['lead']> = null;
    await failureOf(
      dataSource.transaction(async (manager) => {
        lead = leadInsert(client, ids[0]);
        await manager.query(`INSERT INTO ${TABLE} (id) VALUES ('${ids[1]}')`);
        expect(await stored(ids)).toEqual([]);
        throw new Error('roll it back');
      }),
    );
    expect(lead).toMatchObject({ state: 'done' });
    expect(await stored(ids)).toEqual([]);
  });

  it('is parsed again when the session lost it (DEALLOCATE, DISCARD)', async () => {
    const { dataSource, client } = await oneConnection();
    await dataSource.transaction(() => Promise.resolve(leadInsert(client, randomUUID())));
    const [{ name }] = await dataSource.query<Array<{ name: string }>>(
      'SELECT name FROM pg_prepared_statements WHERE statement = $1',
      [LEAD],
    );
    await dataSource.query(`DEALLOCATE ${name}`);
    const ids = [randomUUID(), randomUUID()];
    const leadAndInsert = (lead: { current: ReturnType<Connection['lead']> }) =>
      dataSource.transaction(async (manager) => {
        lead.current = leadInsert(client, ids[0]);
        await insert(manager, ids[1]);
      });

    const lost = { current: null as ReturnType<Connection['lead']> };
    expect(await failureOf(leadAndInsert(lost))).toMatchObject({ driverError: { code: '26000' } });
    expect(lost.current).toMatchObject({ state: 'failed' });
    expect(await stored(ids)).toEqual([]);

    const again = { current: null as ReturnType<Connection['lead']> };
    await leadAndInsert(again);
    expect(again.current).toMatchObject({ state: 'done' });
    expect(await stored(ids)).toEqual([...ids].sort());
  });

  it('cannot lead outside a transaction: null', async () => {
    const { client } = await oneConnection();
    expect(client.lead('SELECT $1::int', [1])).toBeNull();
  });
});
