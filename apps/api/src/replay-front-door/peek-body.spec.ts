import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { peekBody } from './peek-body';

/** What the server saw of one request: the peeked bytes, then what a later reader read. */
interface Seen {
  peeked: Buffer | null;
  readAfter: Buffer | null;
}

/** Reads a request to its end, as a body parser does ('data' then 'end'). */
function readToEnd(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

describe('peekBody', () => {
  let server: Server;
  let url: string;
  let seen: Promise<Seen>;
  /** How the next request's body is read after the peek: at once, or a macrotask later. */
  let readerAttaches: 'at once' | 'later';

  beforeAll(async () => {
    server = createServer((request, response) => {
      seen = (async () => {
        const peeked = await peekBody(request, Number(request.headers['content-length']));
        if (readerAttaches === 'later') await sleep(5);
        const readAfter = peeked === null ? null : await readToEnd(request);
        response.end('ok');
        return { peeked, readAfter };
      })();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  function post(parts: Buffer[], length: number, pauseMs: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const request = httpRequest(
        url,
        { method: 'POST', headers: { 'Content-Length': String(length) } },
        (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
        },
      );
      request.on('error', reject);
      void (async () => {
        for (const part of parts) {
          request.write(part);
          await sleep(pauseMs);
        }
        request.end();
      })();
    });
  }

  it.each(['at once', 'later'] as const)(
    'gives the exact bytes of a body sent in parts, and puts them back: a reader attaching %s reads them to the end',
    async (when) => {
      readerAttaches = when;
      const body = Buffer.from(
        JSON.stringify({ text: 'Pirkėjas €', n: Array.from({ length: 3000 }, (_, i) => i) }),
      );
      const parts = [body.subarray(0, 7), body.subarray(7, 8), body.subarray(8, 9000), body.subarray(9000)];

      expect(await post(parts, body.length, 20)).toBe(200);
      const { peeked, readAfter } = await seen;

      expect(peeked?.equals(body)).toBe(true);
      expect(readAfter?.equals(body)).toBe(true);
    },
  );

  it('resolves null when the client goes away before the whole body arrived', async () => {
    const sent = new Promise<void>((resolve) => {
      const request = httpRequest(url, { method: 'POST', headers: { 'Content-Length': '100' } });
      request.on('error', () => resolve());
      request.on('close', () => resolve());
      request.write(Buffer.alloc(10, 1), () => setTimeout(() => request.destroy(), 20));
    });
    await sent;

    await expect(seen).resolves.toEqual({ peeked: null, readAfter: null });
  });
});
