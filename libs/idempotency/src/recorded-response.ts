import type { RecordedResponse } from './idempotency.options';

/**
 * Carries a recorded response (a replay, or a stored business rejection) to the exception
 * filter, which writes status, headers and body exactly as recorded.
 */
export class RecordedResponseReplay extends Error {
  readonly code = 'recorded_response';
  constructor(readonly recorded: RecordedResponse) {
    super(`recorded response ${recorded.status}`);
  }
}
