import { Client, type QueryResult } from 'pg';

/**
 * Named prepared statements per connection, so PostgreSQL parses, analyses and plans a statement
 * once per connection instead of on every call. Measured on the create path's own statements
 * (docs/performance.md): the server's CPU per create fell by a quarter on PostgreSQL 15 and by
 * about 40 % on 18 (whose plan cache also serves SQL-language functions, such as the constraints' helpers).
 *
 * Only parameterized statements are named (`query(text, values)` with at least one value, which is
 * how TypeORM and the repositories send SQL); fixed text (`COMMIT`, DDL) stays on the simple
 * protocol. A connection names at most `limit` distinct texts — the server keeps a plan for each
 * for the connection's lifetime — and sends any further text unnamed, as before.
 *
 * A prepared statement's result columns are fixed: after DDL that changes them (another instance
 * migrating during a rolling deploy), its next run fails with 0A000 "cached plan must not change
 * result type". That error counts as transient (`isTransientDatabaseFailure`, so the request answers
 * 503 with Retry-After and its transaction rolls back), and the connection forgets the name: the
 * retry prepares the statement afresh.
 */
export function preparingClient(limit: number): typeof Client {
  return class PreparingClient extends Client {
    /** Statement text → its name on this connection. */
    readonly #names = new Map<string, string>();
    #nextName = 0;

    override query(...args: unknown[]): never {
      const [text, values, callback] = args;
      const name =
        typeof text === 'string' && isValueList(values) && callback === undefined
          ? this.#nameOf(text)
          : undefined;
      if (name === undefined) return (super.query as (...all: unknown[]) => never)(...args);
      const sent: Promise<QueryResult> = super.query({
        name,
        text: text as string,
        values: values as unknown[],
      });
      return sent.catch((error: unknown) => {
        if (isStalePlan(error)) this.#names.delete(text as string);
        throw error;
      }) as never;
    }

    #nameOf(text: string): string | undefined {
      const known = this.#names.get(text);
      if (known !== undefined || this.#names.size >= limit) return known;
      const name = `lk_${(this.#nextName += 1)}`;
      this.#names.set(text, name);
      return name;
    }
  };
}

function isValueList(values: unknown): values is unknown[] {
  return Array.isArray(values) && values.length > 0;
}

/**
 * SQLSTATE 0A000 as raised for a prepared statement whose result columns changed under it. 0A000
 * alone means any unsupported feature; the server's routine (`RevalidateCachedQuery`) names this
 * one whatever the server's `lc_messages`, the English message is the fallback.
 */
export function isStalePlan(error: unknown): boolean {
  const { code, routine, message } = (error ?? {}) as {
    code?: unknown;
    routine?: unknown;
    message?: unknown;
  };
  return (
    code === '0A000' &&
    (routine === 'RevalidateCachedQuery' ||
      (typeof message === 'string' && message.includes('cached plan must not change result type')))
  );
}
