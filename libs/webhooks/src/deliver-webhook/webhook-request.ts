import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import {
  ForbiddenTargetError,
  hostOf,
  resolveAllowedTarget,
  type TargetAddress,
} from '../target-guard/webhook-target';
import type { SignedHeaders } from '../signing/webhook-signature';

/** What one attempt ended with. */
export interface AttemptOutcome {
  /** The answer's status, or null when none arrived (network error, timeout, refused target). */
  statusCode: number | null;
  durationMs: number;
  /** Why the attempt failed, null on 2xx. */
  error: string | null;
  succeeded: boolean;
}

export interface WebhookRequest {
  url: string;
  body: string;
  headers: SignedHeaders;
  /** Whole attempt: DNS, connect, TLS, request and the answer's status line. */
  timeoutMs: number;
  allowPrivateTargets: boolean;
}

const USER_AGENT = 'ledgerkey-webhooks/1';

/**
 * POSTs one signed delivery. The host is resolved and checked once, and the connection goes
 * to exactly that address (`lookup` is pinned), so DNS rebinding cannot steer it elsewhere.
 * Redirects are not followed: a 3xx is a failed attempt. Any 2xx is success. Never throws.
 */
export async function sendWebhook(request: WebhookRequest): Promise<AttemptOutcome> {
  const started = performance.now();
  const signal = AbortSignal.timeout(request.timeoutMs);
  const outcome = (statusCode: number | null, error: string | null): AttemptOutcome => ({
    statusCode,
    durationMs: Math.max(0, Math.round(performance.now() - started)),
    error,
    succeeded: statusCode !== null && statusCode >= 200 && statusCode <= 299,
  });
  try {
    const url = new URL(request.url);
    const target = await abortable(resolveAllowedTarget(url, request.allowPrivateTargets), signal);
    const statusCode = await post(url, target, request, signal);
    return outcome(
      statusCode,
      statusCode >= 200 && statusCode <= 299 ? null : `endpoint answered HTTP ${statusCode}`,
    );
  } catch (error) {
    return outcome(null, describe(error, signal, request.timeoutMs));
  }
}

function post(
  url: URL,
  target: TargetAddress,
  request: WebhookRequest,
  signal: AbortSignal,
): Promise<number> {
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (options.all) {
      (callback as unknown as (error: null, addresses: TargetAddress[]) => void)(null, [target]);
    } else {
      callback(null, target.address, target.family);
    }
  };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<number>((resolve, reject) => {
    const outgoing = send(
      {
        protocol: url.protocol,
        // The name, not the address: Host header, TLS SNI and certificate checks use it.
        host: hostOf(url),
        port: url.port === '' ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        lookup: pinned,
        // A fresh connection per attempt: a pooled socket could lead to an address checked earlier.
        agent: false,
        signal,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(request.body),
          'User-Agent': USER_AGENT,
          ...request.headers,
        },
      },
      (response: IncomingMessage) => {
        // Only the status matters; the body is not read.
        response.on('error', () => undefined);
        resolve(response.statusCode ?? 0);
        response.destroy();
      },
    );
    // `on`, not `once`: tearing the socket down after the answer may emit a second error.
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}

function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function describe(error: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (signal.aborted) return `timed out after ${timeoutMs} ms`;
  if (error instanceof ForbiddenTargetError) return `target refused: ${error.message}`;
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' && message !== '' ? message : String(error);
  return (typeof code === 'string' && !text.includes(code) ? `${code}: ${text}` : text).slice(0, 500);
}
