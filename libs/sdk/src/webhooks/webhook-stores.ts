/**
 * Where a receiver remembers the webhook ids it has applied: the id and the handler's effect
 * commit together, or neither does, so a repeat (delivery is at least once) applies nothing and a
 * failed handler leaves the id free for ledgerkey's retry.
 */
export interface WebhookDedupStore<Tx> {
  /**
   * Runs `effect` unless `webhookId` was already applied; a concurrent call with the same id waits
   * for the first and then reports a duplicate (or runs, when the first failed).
   * @throws whatever `effect` throws; the id is then not recorded
   */
  once<R>(
    webhookId: string,
    effect: (tx: Tx) => Promise<R>,
  ): Promise<{ duplicate: true } | { duplicate: false; result: R }>;
}

/**
 * In one process's memory: for tests and single-process receivers whose effect is itself in memory.
 * Forgets everything on restart — use the PostgreSQL store when the effect is durable.
 */
export class InMemoryWebhookStore implements WebhookDedupStore<void> {
  private readonly applied = new Set<string>();
  private readonly running = new Map<string, Promise<unknown>>();

  async once<R>(
    webhookId: string,
    effect: (tx: void) => Promise<R>,
  ): Promise<{ duplicate: true } | { duplicate: false; result: R }> {
    for (;;) {
      if (this.applied.has(webhookId)) return { duplicate: true };
      const first = this.running.get(webhookId);
      if (first === undefined) break;
      // The first's outcome decides: applied → duplicate; failed → this one runs.
      await first.catch(() => undefined);
    }
    const run = effect(undefined);
    this.running.set(webhookId, run);
    try {
      const result = await run;
      this.applied.add(webhookId);
      return { duplicate: false, result };
    } finally {
      this.running.delete(webhookId);
    }
  }
}

/** What the PostgreSQL store needs of a `pg` client (structural: the SDK does not import `pg`). */
export interface PgClientLike {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** A `pg` Pool (or anything that lends clients the same way). */
export interface PgPoolLike {
  connect(): Promise<PgClientLike & { release(error?: Error | boolean): void }>;
}

export interface PostgresWebhookStoreOptions {
  /** Default `ledgerkey_webhook_receipts`; may be schema-qualified. */
  table?: string;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}(\.[a-z_][a-z0-9_]{0,62})?$/;

/**
 * PostgreSQL: one row per applied webhook id under a primary key, inserted in the same transaction
 * as the handler's effect (the handler gets that transaction's client). A concurrent repeat blocks
 * on the key until the first commits (then it is a duplicate) or rolls back (then it applies).
 */
export class PostgresWebhookStore implements WebhookDedupStore<PgClientLike> {
  readonly table: string;

  constructor(
    private readonly pool: PgPoolLike,
    options: PostgresWebhookStoreOptions = {},
  ) {
    this.table = options.table ?? 'ledgerkey_webhook_receipts';
    if (!IDENTIFIER.test(this.table)) throw new TypeError(`invalid table name ${this.table}`);
  }

  /** The table, for your migrations; `install()` runs it. */
  schemaSql(): string {
    return `CREATE TABLE IF NOT EXISTS ${this.table} (
      webhook_id  text PRIMARY KEY CHECK (length(webhook_id) BETWEEN 1 AND 255),
      received_at timestamptz NOT NULL DEFAULT now()
    )`;
  }

  async install(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query(this.schemaSql());
    } finally {
      client.release();
    }
  }

  async once<R>(
    webhookId: string,
    effect: (tx: PgClientLike) => Promise<R>,
  ): Promise<{ duplicate: true } | { duplicate: false; result: R }> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      try {
        // The primary key decides: a repeat inserts nothing (waiting for a concurrent first).
        const claimed = await client.query(
          `INSERT INTO ${this.table} (webhook_id) VALUES ($1) ON CONFLICT (webhook_id) DO NOTHING RETURNING webhook_id`,
          [webhookId],
        );
        if (claimed.rows.length === 0) {
          await client.query('ROLLBACK');
          return { duplicate: true };
        }
        const result = await effect(client);
        await client.query('COMMIT');
        return { duplicate: false, result };
      } catch (error) {
        await client.query('ROLLBACK').catch((rollbackError: unknown) => {
          broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        });
        throw error;
      }
    } finally {
      // A client whose ROLLBACK failed is not returned to the pool.
      client.release(broken);
    }
  }
}
