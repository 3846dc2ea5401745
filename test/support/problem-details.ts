import type { Response } from 'supertest';

/**
 * The problem+json body of `response`, after checking its status and code (in the status line and
 * the body) and its content type.
 */
export function problemOf(response: Response, status: number, code: string): Record<string, unknown> {
  const body = JSON.parse(response.text) as Record<string, unknown>;
  expect({ status: response.status, code: body.code }).toEqual({ status, code });
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(body.status).toBe(status);
  return body;
}
