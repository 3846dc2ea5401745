interface PostgresErrorShape {
  code?: string;
  constraint?: string;
  driverError?: PostgresErrorShape;
}

function driverError(error: unknown): PostgresErrorShape | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const shaped = error as PostgresErrorShape;
  return shaped.driverError ?? shaped;
}

/** True for SQLSTATE 23505 (unique_violation), optionally on one named constraint. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const pg = driverError(error);
  return pg?.code === '23505' && (constraint === undefined || pg.constraint === constraint);
}

export function constraintName(error: unknown): string | undefined {
  return driverError(error)?.constraint;
}

/**
 * Server gone or not accepting connections: SQLSTATE class 08 (connection exception), 57P01–03
 * (terminated by a shutdown, crash, or the server not yet / no longer accepting connections),
 * and the socket errors of a refused or cut connection.
 */
const CONNECTION_LOSS_CODES = new Set(['57P01', '57P02', '57P03', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE']);
/** node-postgres raises these without a code when the socket closes under a client or pool. */
const CONNECTION_LOSS_MESSAGES = [
  'Connection terminated',
  'Client has encountered a connection error',
  'timeout exceeded when trying to connect',
];

/**
 * True when the error means the database could not be reached (e.g. it is restarting), as
 * opposed to a statement it rejected. Follows TypeORM's `driverError` and `cause` chains.
 */
export function isConnectionLoss(error: unknown): boolean {
  return someInChain(
    error,
    ({ code, message }) =>
      (typeof code === 'string' && (CONNECTION_LOSS_CODES.has(code) || code.startsWith('08'))) ||
      (typeof message === 'string' && CONNECTION_LOSS_MESSAGES.some((prefix) => message.startsWith(prefix))),
  );
}

/**
 * Failures of a statement that say nothing about the request and abort its transaction, so the
 * same request may succeed a moment later: 57014 query_canceled (a lock wait or statement past
 * `statement_timeout`), 55P03 lock_not_available (`lock_timeout`, `NOWAIT`), 40001
 * serialization_failure and 40P01 deadlock_detected.
 */
const TRANSIENT_STATEMENT_CODES = new Set(['57014', '55P03', '40001', '40P01']);

/**
 * True when the request failed for a reason of the moment rather than of the request: the
 * database could not be reached (`isConnectionLoss`) or aborted the statement for a timeout, a
 * lock, a serialization failure, a deadlock, or a prepared statement whose result columns a
 * migration changed (`isStalePlan`; the connection prepares it afresh next time). Either way its
 * transaction rolled back and a retry may succeed. Follows TypeORM's `driverError` and `cause` chains.
 */
export function isTransientDatabaseFailure(error: unknown): boolean {
  return (
    isConnectionLoss(error) ||
    someInChain(
      error,
      (link) =>
        (typeof link.code === 'string' && TRANSIENT_STATEMENT_CODES.has(link.code)) || isStalePlan(link),
    )
  );
}

interface ChainLink {
  code?: unknown;
  routine?: unknown;
  message?: unknown;
  driverError?: unknown;
  cause?: unknown;
}

/** Tests the error and what it wraps (TypeORM's `driverError`, then `cause`), a few levels deep. */
function someInChain(error: unknown, test: (link: ChainLink) => boolean): boolean {
  for (let current = error, depth = 0; depth < 5; depth += 1) {
    if (typeof current !== 'object' || current === null) return false;
    const link = current as ChainLink;
    if (test(link)) return true;
    current = link.driverError ?? link.cause;
  }
  return false;
}

/**
 * SQLSTATE 0A000 as raised for a prepared statement whose result columns changed under it (DDL of
 * another instance's migration). 0A000 alone means any unsupported feature; the server's routine
 * (`RevalidateCachedQuery`) names this one whatever its `lc_messages`, the English message is the
 * fallback.
 */
export function isStalePlan(error: unknown): boolean {
  const { code, routine, message } = (error ?? {}) as ChainLink;
  return (
    code === '0A000' &&
    (routine === 'RevalidateCachedQuery' ||
      (typeof message === 'string' && message.includes('cached plan must not change result type')))
  );
}

/** SQLSTATE 42P01 (undefined_table), e.g. a table no migration has created yet. */
export function isUndefinedTable(error: unknown): boolean {
  return driverError(error)?.code === '42P01';
}
