import type { IncomingMessage } from 'node:http';

/**
 * A request body's exact bytes, read and put back: whoever reads the request next (the body
 * parser) reads the same bytes and the same end, as if nobody had read before it. `length` is the
 * request's Content-Length, which the HTTP parser holds the body to.
 *
 * Resolves null, with what arrived put back, when the request errors or closes first.
 */
export function peekBody(request: IncomingMessage, length: number): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const done = (complete: boolean) => {
      request.off('readable', onReadable);
      request.off('error', onStop);
      request.off('close', onStop);
      const bytes = Buffer.concat(chunks, received);
      // Before the stream's end is emitted: a stream that ended with its last bytes unread ends
      // only once those are read again (Node checks for "one last unshift").
      if (received > 0) request.unshift(bytes);
      resolve(complete ? bytes : null);
    };
    const onReadable = () => {
      for (let chunk: Buffer | null; received < length && (chunk = request.read() as Buffer | null);) {
        chunks.push(chunk);
        received += chunk.length;
      }
      if (received >= length) done(true);
    };
    const onStop = () => done(false);
    request.on('readable', onReadable);
    request.on('error', onStop);
    request.on('close', onStop);
  });
}
