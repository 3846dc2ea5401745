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
