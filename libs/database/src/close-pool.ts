import type { Pool } from 'pg';

/**
 * A pool whose `close` resolves once every connection it opened is closed. pg-pool's own `end()`
 * resolves when the last client is taken out of the pool, before that client's connection has
 * closed: a server stopped right after (the embedded PostgreSQL, last in the process's stop) still
 * meets those sessions and terminates them, and each client reports "terminating connection due
 * to administrator command" as an error. Tracks the clients through the pool's public `connect`
 * and `remove` events (pg-pool emits `remove` once the client's `end()` finished).
 * Call `closing(pool)` right after creating the pool, before its first connection.
 */
export function closing(pool: Pool): { close(): Promise<void> } {
  const open = new Set<unknown>();
  let allClosed: (() => void) | undefined;
  pool.on('connect', (client) => open.add(client));
  pool.on('remove', (client) => {
    open.delete(client);
    if (open.size === 0) allClosed?.();
  });
  let closed: Promise<void> | undefined;
  return {
    close() {
      closed ??= pool.end().then(
        () =>
          new Promise<void>((resolve) => {
            allClosed = resolve;
            if (open.size === 0) resolve();
          }),
      );
      return closed;
    },
  };
}
