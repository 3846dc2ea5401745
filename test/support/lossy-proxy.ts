import { createServer, connect, type Server, type Socket } from 'node:net';

/** One HTTP/1.1 request as the proxy framed it from the client's bytes. */
export interface ProxiedRequest {
  /** 0-based, in arrival order across all connections. */
  sequence: number;
  method: string;
  path: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
}

export type ProxyFate = 'forward' | 'reset-before-forward' | 'drop-response';

export interface LossyProxyOptions {
  target: { host: string; port: number };
  /**
   * Share of requests forwarded to the server whose connection is then destroyed as the
   * response starts to arrive: the server did the work, the client never hears of it.
   */
  dropResponseRate?: number;
  /** Share of requests whose connection is reset (RST) before anything reaches the server. */
  resetBeforeForwardRate?: number;
  /** Each request waits uniformly in [0, maxDelayMs) before it is forwarded. */
  maxDelayMs?: number;
  /** Uniform in [0, 1). Default Math.random; pass a seeded one for a reproducible run. */
  random?: () => number;
  /** Which requests the faults apply to; others are always forwarded intact. Default: all. */
  appliesTo?: (request: ProxiedRequest) => boolean;
}

export interface LossyProxyStats {
  requests: number;
  forwarded: number;
  droppedResponses: number;
  resetsBeforeForward: number;
  /** Every request the proxy saw, with what it did to it. */
  log: Array<ProxiedRequest & { fate: ProxyFate }>;
}

export interface LossyProxy {
  /** e.g. http://127.0.0.1:41234 — point the client here instead of at the server. */
  readonly url: string;
  readonly stats: LossyProxyStats;
  close(): Promise<void>;
}

const HEADER_END = Buffer.from('\r\n\r\n');

/**
 * A test-only TCP proxy that loses HTTP responses the way real networks do. It frames
 * HTTP/1.1 requests (Content-Length bodies; clients such as fetch send one request at a time
 * per connection) so each request gets its own fate: forwarded intact, reset before it
 * reaches the server, or forwarded and its connection destroyed when the answer begins —
 * the lost-response case that idempotency keys exist for.
 */
export async function startLossyProxy(options: LossyProxyOptions): Promise<LossyProxy> {
  const random = options.random ?? Math.random;
  const stats: LossyProxyStats = {
    requests: 0,
    forwarded: 0,
    droppedResponses: 0,
    resetsBeforeForward: 0,
    log: [],
  };
  const sockets = new Set<Socket>();

  const server: Server = createServer((client) => {
    const upstream = connect(options.target.port, options.target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());

    let buffered = Buffer.alloc(0);
    let raw = false;
    let dropNextResponse = false;
    let pumping = false;

    upstream.on('data', (chunk: Buffer) => {
      if (dropNextResponse) {
        // The server has answered (so it has done the work); the client never sees a byte.
        stats.droppedResponses += 1;
        dropNextResponse = false;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });

    const pump = async (): Promise<void> => {
      if (pumping) return;
      pumping = true;
      client.pause();
      try {
        for (;;) {
          if (raw) {
            if (buffered.length > 0) upstream.write(buffered);
            buffered = Buffer.alloc(0);
            return;
          }
          const framed = takeRequest(buffered);
          if (framed === 'incomplete') return;
          if (framed === 'unframeable') {
            raw = true;
            continue;
          }
          buffered = buffered.subarray(framed.length);
          const request: ProxiedRequest = { sequence: stats.requests, ...framed.head };
          stats.requests += 1;
          const faulty = options.appliesTo?.(request) ?? true;
          const draw = random();
          const resetShare = faulty ? (options.resetBeforeForwardRate ?? 0) : 0;
          const dropShare = faulty ? (options.dropResponseRate ?? 0) : 0;
          const fate: ProxyFate =
            draw < resetShare
              ? 'reset-before-forward'
              : draw < resetShare + dropShare
                ? 'drop-response'
                : 'forward';
          stats.log.push({ ...request, fate });
          if (fate === 'reset-before-forward') {
            stats.resetsBeforeForward += 1;
            client.resetAndDestroy();
            upstream.destroy();
            return;
          }
          if (options.maxDelayMs)
            await new Promise((resolve) => setTimeout(resolve, random() * options.maxDelayMs!));
          if (client.destroyed || upstream.destroyed) return;
          stats.forwarded += 1;
          dropNextResponse = fate === 'drop-response';
          upstream.write(framed.bytes);
        }
      } finally {
        pumping = false;
        if (!client.destroyed) client.resume();
      }
    };

    client.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      void pump();
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

interface FramedRequest {
  head: Omit<ProxiedRequest, 'sequence'>;
  bytes: Buffer;
  length: number;
}

/** The first complete request in `buffer`, or why there is none. */
function takeRequest(buffer: Buffer): FramedRequest | 'incomplete' | 'unframeable' {
  const headerEnd = buffer.indexOf(HEADER_END);
  if (headerEnd < 0) return 'incomplete';
  const lines = buffer.subarray(0, headerEnd).toString('latin1').split('\r\n');
  const [method = '', path = ''] = (lines[0] ?? '').split(' ');
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  if (headers['transfer-encoding'] !== undefined) return 'unframeable';
  const bodyLength = Number(headers['content-length'] ?? '0');
  if (!Number.isSafeInteger(bodyLength) || bodyLength < 0) return 'unframeable';
  const length = headerEnd + HEADER_END.length + bodyLength;
  if (buffer.length < length) return 'incomplete';
  return { head: { method, path, headers }, bytes: Buffer.from(buffer.subarray(0, length)), length };
}
