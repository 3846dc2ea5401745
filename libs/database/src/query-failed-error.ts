/**
 * A statement of the request pool (`DatabasePool`, `PgTransaction`) that failed: what was sent,
 * and the driver's error, whose fields (`code`, `constraint`, `detail`, …) it carries too. The
 * shape TypeORM gives its `QueryFailedError` (this pool's errors were TypeORM's until the pool
 * was ours), so callers, the error classification (`postgres-errors.ts`) and logs read either
 * the same way.
 */
export class QueryFailedError extends Error {
  override readonly name = 'QueryFailedError';

  constructor(
    readonly query: string,
    readonly parameters: unknown[] | undefined,
    readonly driverError: Error,
  ) {
    super(driverError.message);
    const {
      name: _name,
      message: _message,
      stack: _stack,
      ...fields
    } = driverError as Error & Record<string, unknown>;
    Object.assign(this, fields);
  }
}
