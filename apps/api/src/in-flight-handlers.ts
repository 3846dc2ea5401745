import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { finalize, type Observable } from 'rxjs';

/**
 * Counts the route handlers still running, so that a stop closes the database pool only after
 * them. The HTTP server's close waits for open connections, not for handlers: a client that hung
 * up (a load generator that stopped, a proxy that timed out) leaves its handler running, mid
 * transaction, with nobody waiting for it. Closing the pool under it rolled that transaction back
 * and logged a 500 — harmless for the books, but not a graceful stop. Registered as the first
 * interceptor, so it spans the idempotency layer and the handler.
 */
@Injectable()
export class InFlightHandlers implements NestInterceptor {
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    this.#running += 1;
    return next.handle().pipe(
      finalize(() => {
        this.#running -= 1;
        if (this.#running === 0) for (const resolve of this.#waiting.splice(0)) resolve();
      }),
    );
  }

  /** Resolves once no handler runs (at once when none does). */
  idle(): Promise<void> {
    if (this.#running === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }
}
