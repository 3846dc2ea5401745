/**
 * The ceiling for replays: a bare `node:http` server that reads each request's body and answers
 * with one stored response (status, headers, body given by the bench in BARE_RESPONSE_FILE).
 * No framework, no database, no key lookup: what one Node process can answer here at all.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const stored = JSON.parse(readFileSync(process.env.BARE_RESPONSE_FILE as string, 'utf8')) as StoredResponse;
const body = Buffer.from(stored.body);
const headers = { ...stored.headers, 'content-length': String(body.length) };

const server = createServer((request, response) => {
  request.on('data', () => undefined);
  request.on('end', () => {
    response.writeHead(stored.status, headers);
    response.end(body);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1', () => {
  console.log(`bare node:http listening on http://${process.env.HOST ?? '127.0.0.1'}:${process.env.PORT}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
