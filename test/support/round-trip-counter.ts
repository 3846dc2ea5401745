import { connect, createServer, type Socket } from 'node:net';

export interface RoundTripCounter {
  /** A DATABASE_URL through the counter, to the same database. */
  readonly url: string;
  /**
   * Round trips since the last `reset()`, on every connection that finished its startup: the times
   * a client sent something while it had no answer outstanding (it then waited for the server).
   * Messages written behind an unanswered one (pg's pipeline mode) ride in that round trip.
   */
  readonly roundTrips: number;
  reset(): void;
  close(): Promise<void>;
}

/**
 * A test-only TCP proxy in front of PostgreSQL that counts round trips from the wire: each Query
 * ('Q') or Sync ('S') the client sends is answered by one ReadyForQuery ('Z'), so what is
 * outstanding is known without trusting the client's code.
 */
export async function startRoundTripCounter(
  databaseUrl: string,
  /** Only connections that start with this application_name count (e.g. not a LISTEN connection's). */
  applicationName: string,
): Promise<RoundTripCounter> {
  const target = new URL(databaseUrl);
  const sockets = new Set<Socket>();
  let roundTrips = 0;
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    let ready = false;
    let counted: boolean | undefined;
    let outstanding = 0;
    const fromClient = messageTypes(true);
    const fromServer = messageTypes(false);
    client.on('data', (chunk) => {
      // The startup message's parameters: key\0value\0… after its length and protocol version.
      counted ??= chunk.subarray(8).toString().split('\0').includes(applicationName);
      const requests = fromClient(chunk).filter((type) => type === 'Q' || type === 'S').length;
      if (counted && ready && requests > 0 && outstanding === 0) roundTrips += 1;
      outstanding += requests;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      const answers = fromServer(chunk).filter((type) => type === 'Z').length;
      if (answers > 0 && !ready) ready = true;
      else outstanding -= answers;
      client.write(chunk);
    });
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const url = Object.assign(new URL(databaseUrl), { hostname: '127.0.0.1', port: String(port) }).toString();
  return {
    url,
    get roundTrips() {
      return roundTrips;
    },
    reset: () => {
      roundTrips = 0;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The types of the whole messages in each chunk of one direction (the client's first is untyped). */
function messageTypes(startsUntyped: boolean): (chunk: Buffer) => string[] {
  let pending = Buffer.alloc(0);
  let untyped = startsUntyped;
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    const types: string[] = [];
    for (;;) {
      const header = untyped ? 0 : 1;
      if (pending.length < header + 4) break;
      const length = header + pending.readInt32BE(header);
      if (pending.length < length) break;
      if (!untyped) types.push(String.fromCharCode(pending[0]));
      untyped = false;
      pending = pending.subarray(length);
    }
    return types;
  };
}
