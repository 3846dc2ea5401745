import type { ServerResponse } from 'node:http';
import etag from 'etag';
import type { RecordedResponse } from './idempotency-record';
import { JSON_CONTENT_TYPE } from './idempotent-executor';

/**
 * Writes an answer of the idempotency layer — a first execution or a replay, success or stored
 * rejection — exactly as recorded: status, headers, body, then `Content-Length` and a weak `ETag`
 * (what Express's `res.send` adds). The only code of the layer that writes HTTP; it needs nothing
 * of a framework, so an answer written before routing (the API's replay front door) and one
 * written by `@Idempotent` routes are the same bytes.
 */
export function sendRecordedResponse(response: ServerResponse, answer: RecordedResponse): void {
  const body = Buffer.from(answer.body, 'utf8');
  response.statusCode = answer.status;
  for (const [name, value] of Object.entries(answer.headers)) response.setHeader(name, value);
  // Records written without one (before Content-Type was stored) are JSON.
  if (!response.hasHeader('Content-Type')) response.setHeader('Content-Type', JSON_CONTENT_TYPE);
  response.setHeader('Content-Length', body.length);
  response.setHeader('ETag', etag(body, { weak: true }));
  response.end(body);
}
