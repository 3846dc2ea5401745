import type { Response } from 'express';
import type { RecordedResponse } from './idempotency-record';
import { JSON_CONTENT_TYPE } from './idempotency-protocol';

/**
 * Writes an answer of the idempotency layer — a first execution or a replay, success or stored
 * rejection — exactly as recorded: status, headers, body. The only code of the layer that knows
 * the HTTP platform (Express); `@Idempotent` routes leave their response to it.
 */
export function sendRecordedResponse(response: Response, answer: RecordedResponse): void {
  response.status(answer.status).set(answer.headers);
  // Records written without one (before Content-Type was stored) are JSON.
  if (response.get('Content-Type') === undefined) response.type(JSON_CONTENT_TYPE);
  response.send(answer.body);
}
