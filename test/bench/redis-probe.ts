/**
 * A few Redis commands over RESP on a plain socket: enough for the bench to see whether Redis
 * answers, check that a replay's key is stored there, and remove its keys afterwards, without
 * a Redis client dependency of its own.
 */
import { connect } from 'node:net';

type Reply = string | number | null | Reply[];

function encode(args: string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}

/** Parses one reply at `offset`; returns it and the next offset, or null if incomplete. */
function parse(buffer: Buffer, offset: number): [Reply, number] | null {
  const end = buffer.indexOf('\r\n', offset);
  if (end < 0) return null;
  const type = String.fromCharCode(buffer[offset]);
  const line = buffer.toString('utf8', offset + 1, end);
  if (type === '+') return [line, end + 2];
  if (type === '-') throw new Error(`redis: ${line}`);
  if (type === ':') return [Number(line), end + 2];
  if (type === '$') {
    const length = Number(line);
    if (length < 0) return [null, end + 2];
    if (buffer.length < end + 2 + length + 2) return null;
    return [buffer.toString('utf8', end + 2, end + 2 + length), end + 2 + length + 2];
  }
  if (type === '*') {
    const count = Number(line);
    if (count < 0) return [null, end + 2];
    const items: Reply[] = [];
    let next = end + 2;
    for (let i = 0; i < count; i += 1) {
      const parsed = parse(buffer, next);
      if (!parsed) return null;
      items.push(parsed[0]);
      next = parsed[1];
    }
    return [items, next];
  }
  throw new Error(`redis: unexpected reply type ${type}`);
}

/** Sends one command and resolves with its reply; rejects after `timeoutMs`. */
export function redisCommand(redisUrl: string, args: string[], timeoutMs = 2000): Promise<Reply> {
  const url = new URL(redisUrl);
  return new Promise((resolveReply, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port || 6379) });
    let buffer = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer from Redis at ${redisUrl} within ${timeoutMs} ms`));
    }, timeoutMs);
    const finish = (error: Error | null, reply?: Reply) => {
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolveReply(reply as Reply);
    };
    socket.on('error', (error) => finish(error));
    socket.on('connect', () => socket.write(encode(args)));
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      try {
        const parsed = parse(buffer, 0);
        if (parsed) finish(null, parsed[0]);
      } catch (error) {
        finish(error as Error);
      }
    });
  });
}

/** Redis's version, or the reason it cannot be used. */
export async function redisVersion(redisUrl: string): Promise<{ version: string } | { unavailable: string }> {
  try {
    if ((await redisCommand(redisUrl, ['PING'])) !== 'PONG')
      return { unavailable: 'PING did not answer PONG' };
    const info = String(await redisCommand(redisUrl, ['INFO', 'server']));
    return { version: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown' };
  } catch (error) {
    return { unavailable: (error as Error).message };
  }
}

/** Deletes every key under a prefix (SCAN + UNLINK); returns how many. */
export async function deleteKeys(redisUrl: string, prefix: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = (await redisCommand(redisUrl, [
      'SCAN',
      cursor,
      'MATCH',
      `${prefix}*`,
      'COUNT',
      '5000',
    ])) as [string, string[]];
    cursor = next;
    if (keys.length > 0) deleted += Number(await redisCommand(redisUrl, ['UNLINK', ...keys]));
  } while (cursor !== '0');
  return deleted;
}
