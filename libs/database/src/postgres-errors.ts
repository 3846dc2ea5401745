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
  for (let current = error, depth = 0; depth < 5; depth += 1) {
    if (typeof current !== 'object' || current === null) return false;
    const { code, message, driverError, cause } = current as {
      code?: unknown;
      message?: unknown;
      driverError?: unknown;
      cause?: unknown;
    };
    if (typeof code === 'string' && (CONNECTION_LOSS_CODES.has(code) || code.startsWith('08'))) return true;
    if (
      typeof message === 'string' &&
      CONNECTION_LOSS_MESSAGES.some((prefix) => message.startsWith(prefix))
    ) {
      return true;
    }
    current = driverError ?? cause;
  }
  return false;
}
