import { randomUUID } from 'node:crypto';
import { type DeferredWrite, DeferredWrites, isUniqueViolation } from '@ledgerkey/database';
import { type HandlerContext, startHandlerContext } from '../../../test/support/handler-context';

let ctx: HandlerContext;
let writes: DeferredWrites;
const TABLE = `deferred_writes_${randomUUID().slice(0, 8)}`;

class DuplicateRowError extends Error {}

/** A write of one row into the scratch table; `kind` decides what may share a statement. */
function row(id: string, kind = 'rows'): DeferredWrite {
  return {
    kind,
    ctes: (bind, name) => [
      ['row', `INSERT INTO ${TABLE} (id, kind) VALUES (${bind(id)}, ${bind(kind)}) RETURNING id`],
      ['seen', `SELECT count(*) FROM ${name('row')}`],
    ],
    reads: ['seen'],
    errorOf: (error) => (isUniqueViolation(error) ? new DuplicateRowError(id) : undefined),
  };
}

/** Runs `work` in a transaction and counts the statements it sends on the transaction. */
async function counted(work: () => Promise<unknown>, tally = { statements: 0 }): Promise<number> {
  await ctx.txHost.withTransaction(async () => {
    const tx = ctx.txHost.tx;
    const query = tx.query.bind(tx);
    // The transaction's own object: it ends with the transaction.
    tx.query = ((text: string, values?: unknown[]) => {
      tally.statements += 1;
      return query(text, values);
    }) as typeof tx.query;
    await work();
  });
  return tally.statements;
}

async function stored(ids: string[]): Promise<string[]> {
  const { rows } = await ctx.db.query<{ id: string }>(
    `SELECT id FROM ${TABLE} WHERE id = ANY($1) ORDER BY id`,
    [ids],
  );
  return rows.map(({ id }) => id);
}

beforeAll(async () => {
  ctx = await startHandlerContext();
  writes = ctx.app.get(DeferredWrites);
  await ctx.db.query(`CREATE TABLE ${TABLE} (id uuid PRIMARY KEY, kind text NOT NULL)`);
});

afterAll(async () => {
  await ctx.db.query(`DROP TABLE IF EXISTS ${TABLE}`);
  await ctx.close();
});

describe('DeferredWrites', () => {
  it('sends several writes as one statement at once when no batch is open', async () => {
    const ids = [randomUUID(), randomUUID()];
    const statements = await counted(() => writes.write(row(ids[0], 'a'), row(ids[1], 'b')));
    expect(statements).toBe(1);
    expect(await stored(ids)).toEqual([...ids].sort());
  });

  it('holds a batch until its work has returned, then sends it as one statement', async () => {
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    const statements = await counted(() =>
      writes.withBatch(async () => {
        await writes.write(row(ids[0], 'a'));
        await writes.write(row(ids[1], 'b'), row(ids[2], 'c'));
        expect(await stored(ids)).toEqual([]);
      }),
    );
    expect(statements).toBe(1);
    expect(await stored(ids)).toEqual([...ids].sort());
  });

  it("sends a waiting batch in front of the transaction's next statement: nothing reads past a deferred write", async () => {
    const ids = [randomUUID(), randomUUID()];
    const seen = await ctx.txHost.withTransaction(() =>
      writes.withBatch(async () => {
        await writes.write(row(ids[0], 'a'), row(ids[1], 'b'));
        return ctx.txHost.tx.query<{ id: string }>(`SELECT id FROM ${TABLE} WHERE id = ANY($1) ORDER BY id`, [
          ids,
        ]);
      }),
    );
    expect(seen.map(({ id }) => id)).toEqual([...ids].sort());
  });

  it('sends the waiting batch first when a second write of the same kind arrives', async () => {
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    const statements = await counted(() =>
      writes.withBatch(async () => {
        await writes.write(row(ids[0], 'a'), row(ids[1], 'b'));
        await writes.write(row(ids[2], 'a'));
      }),
    );
    expect(statements).toBe(2);
    expect(await stored(ids)).toEqual([...ids].sort());
  });

  it("raises the failing write's own error when the batch is sent, and nothing of the batch is kept", async () => {
    const existing = randomUUID();
    await ctx.db.query(`INSERT INTO ${TABLE} (id, kind) VALUES ($1, 'x')`, [existing]);
    const fresh = randomUUID();
    await expect(
      ctx.txHost.withTransaction(() =>
        writes.withBatch(async () => {
          await writes.write(row(fresh, 'a'), row(existing, 'b'));
        }),
      ),
    ).rejects.toThrow(DuplicateRowError);
    expect(await stored([fresh])).toEqual([]);
  });

  it('sends nothing when the work fails', async () => {
    const id = randomUUID();
    const tally = { statements: 0 };
    await expect(
      counted(
        () =>
          writes.withBatch(async () => {
            await writes.write(row(id));
            throw new Error('the use case failed');
          }),
        tally,
      ),
    ).rejects.toThrow('the use case failed');
    expect(tally.statements).toBe(0);
    expect(await stored([id])).toEqual([]);
  });

  it('needs a transaction for a batch, and one batch per transaction', async () => {
    await expect(writes.withBatch(() => Promise.resolve())).rejects.toThrow('needs a transaction');
    await expect(
      ctx.txHost.withTransaction(() => writes.withBatch(() => writes.withBatch(() => Promise.resolve()))),
    ).rejects.toThrow('already has a batch');
  });
});
