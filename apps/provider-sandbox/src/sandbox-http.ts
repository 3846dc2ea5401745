import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { FaultMixError, formatFaultMix, parseFaultMix } from './fault-mix';
import { fingerprintOf, type IdempotencyKeys } from './idempotency-keys';
import { type Answer, type IdempotencyScope, newId, type ProviderSandbox } from './provider-sandbox';
import type { Faults, RequestFault } from './sandbox-faults';
import type { SandboxLogger } from './sandbox-logger';
import {
  parseChargeParams,
  parseListQuery,
  parsePayoutParams,
  parsePlantedChargeParams,
  parseRefundParams,
} from './sandbox-requests';
import type { SandboxStore } from './sandbox-store';
import { invalidParameter, SandboxRequestError } from './sandbox.errors';
import { MAX_SEED } from './seeded-random';

export interface SandboxHttpOptions {
  apiKey: string;
  /** How long `pm_card_timeout` and the `timeout` fault hold a request before doing it. */
  timeoutHoldMs: number;
}

interface Context {
  request: IncomingMessage;
  response: ServerResponse;
  url: URL;
  params: string[];
}

type Handler = (context: Context) => Promise<void>;

const BODY_LIMIT_BYTES = 64 * 1024;
const KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * The sandbox's HTTP API (docs/provider-sandbox.md): a bearer key on everything but `/health`,
 * JSON in and out, errors as `{ "error": { "type", "code", "message", "param" } }`. Charges and
 * refunds need an Idempotency-Key and pass through the faults: the fault mix's draw first (error:
 * 500 before anything; timeout: hold, then go on; lost response: go on, then destroy the
 * connection), then the magic payment method when the request executes (not when it replays).
 */
export function createSandboxServer(
  sandbox: ProviderSandbox,
  store: SandboxStore,
  keys: IdempotencyKeys,
  faults: Faults,
  options: SandboxHttpOptions,
  logger: SandboxLogger,
): Server {
  const routes: Array<[string, RegExp, Handler]> = [
    ['POST', /^\/v1\/charges$/, createCharge],
    [
      'GET',
      /^\/v1\/charges$/,
      async ({ response, url }) =>
        sendJson(
          response,
          200,
          sandbox.listCharges(parseListQuery(url.searchParams, ['reference', 'companyId'])),
        ),
    ],
    [
      'GET',
      /^\/v1\/charges\/([^/]+)$/,
      async ({ response, params }) => sendJson(response, 200, sandbox.getCharge(params[0])),
    ],
    ['POST', /^\/v1\/charges\/([^/]+)\/refunds$/, refundCharge],
    ['POST', /^\/v1\/payouts$/, runPayouts],
    [
      'GET',
      /^\/v1\/payouts$/,
      async ({ response, url }) =>
        sendJson(response, 200, sandbox.listPayouts(parseListQuery(url.searchParams, ['companyId']))),
    ],
    [
      'GET',
      /^\/v1\/payouts\/([^/]+)$/,
      async ({ response, params }) => sendJson(response, 200, sandbox.getPayout(params[0])),
    ],
    [
      'POST',
      /^\/_sandbox\/charges$/,
      async ({ request, response }) =>
        sendJson(response, 201, await sandbox.plantCharge(parsePlantedChargeParams(await readJson(request)))),
    ],
    [
      'DELETE',
      /^\/_sandbox\/charges\/([^/]+)$/,
      async ({ response, params }) => {
        await sandbox.dropCharge(params[0]);
        sendJson(response, 200, { id: params[0], dropped: true });
      },
    ],
    ['GET', /^\/_sandbox\/faults$/, async ({ response }) => sendJson(response, 200, faultsView())],
    ['PUT', /^\/_sandbox\/faults$/, setFaults],
    [
      'GET',
      /^\/_sandbox\/counters$/,
      async ({ response, url }) =>
        sendJson(response, 200, sandbox.counters(url.searchParams.get('reference') ?? undefined)),
    ],
    [
      'GET',
      /^\/_sandbox\/events$/,
      async ({ response }) => sendJson(response, 200, { data: sandbox.listEvents() }),
    ],
    [
      'POST',
      /^\/_sandbox\/reset$/,
      async ({ response }) => {
        await store.reset();
        sendJson(response, 200, { reset: true });
      },
    ],
  ];

  async function createCharge(context: Context): Promise<void> {
    const params = parseChargeParams(await readJson(context.request));
    const scope = scopeOf(context.request, 'charge.create', params);
    const magic: RequestFault | null =
      params.paymentMethod === 'pm_card_error'
        ? 'error'
        : params.paymentMethod === 'pm_card_timeout'
          ? 'timeout'
          : params.paymentMethod === 'pm_card_lost_response'
            ? 'lost_response'
            : null;
    await faultyChange(context, scope, magic, (generation) =>
      sandbox.createCharge(params, scope, generation),
    );
  }

  async function refundCharge(context: Context): Promise<void> {
    const chargeId = context.params[0];
    const params = parseRefundParams(await readJson(context.request));
    const scope = scopeOf(context.request, 'charge.refund', { chargeId, ...params });
    await faultyChange(context, scope, null, (generation) =>
      sandbox.refundCharge(chargeId, params, scope, generation),
    );
  }

  async function runPayouts({ request, response }: Context): Promise<void> {
    const params = parsePayoutParams(await readJson(request));
    if (request.headers['idempotency-key'] === undefined)
      return sendAnswer(response, await sandbox.runPayouts(params));
    const scope = scopeOf(request, 'payout.create', params);
    const claim = keys.claim(scope);
    if (claim.kind !== 'claimed') return sendAnswer(response, answerOfClaim(claim));
    try {
      sendAnswer(response, await sandbox.runPayouts(params, scope));
    } finally {
      claim.release();
    }
  }

  /**
   * A change under an Idempotency-Key, with faults. `magic` is the payment method's own fault,
   * applied only when this request executes the change.
   */
  async function faultyChange(
    { response }: Context,
    scope: IdempotencyScope,
    magic: RequestFault | null,
    execute: (generation: number) => Promise<Answer>,
  ): Promise<void> {
    const drawn = faults.drawRequestFault();
    if (drawn !== null) faults.count(drawn);
    if (drawn === 'error') throw processingError();
    if (drawn === 'timeout') await sleep(options.timeoutHoldMs);
    const claim = keys.claim(scope);
    let answer: Answer;
    let loseResponse = drawn === 'lost_response';
    if (claim.kind !== 'claimed') {
      answer = answerOfClaim(claim);
    } else {
      try {
        if (magic !== null) faults.count(magic);
        if (magic === 'error') throw processingError();
        if (magic === 'timeout' && drawn !== 'timeout') await sleep(options.timeoutHoldMs);
        answer = await execute(store.generation);
        loseResponse ||= magic === 'lost_response';
      } finally {
        claim.release();
      }
    }
    // The change is committed; the client never learns it.
    if (loseResponse) return void response.socket?.destroy();
    sendAnswer(response, answer);
  }

  function scopeOf(request: IncomingMessage, operation: string, params: unknown): IdempotencyScope {
    const key = request.headers['idempotency-key'];
    if (typeof key !== 'string' || !KEY.test(key)) {
      throw new SandboxRequestError(
        400,
        'idempotency_key_missing',
        'An Idempotency-Key header of 1 to 255 visible ASCII characters is required.',
      );
    }
    return { operation, key, fingerprint: fingerprintOf(params) };
  }

  async function setFaults({ request, response }: Context): Promise<void> {
    const body = (await readJson(request)) as { faults?: unknown; seed?: unknown } | null;
    if (typeof body !== 'object' || body === null || typeof body.faults !== 'string') {
      throw invalidParameter('faults', 'faults must be a string in the PROVIDER_SANDBOX_FAULTS format.');
    }
    const seed = body.seed;
    if (
      seed !== undefined &&
      (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > MAX_SEED)
    ) {
      throw invalidParameter('seed', `seed must be an integer from 0 to ${MAX_SEED}.`);
    }
    try {
      faults.set(parseFaultMix(body.faults), seed);
    } catch (error) {
      if (error instanceof FaultMixError) throw invalidParameter('faults', error.message);
      throw error;
    }
    sendJson(response, 200, faultsView());
  }

  function faultsView(): unknown {
    return {
      faults: formatFaultMix(faults.mix),
      mix: faults.mix,
      seed: faults.seed,
      injected: faults.injected,
    };
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const requestId = newId('req');
    response.setHeader('Request-Id', requestId);
    const url = new URL(request.url ?? '/', 'http://sandbox');
    try {
      if (request.method === 'GET' && url.pathname === '/health')
        return sendJson(response, 200, { status: 'ok' });
      authenticate(request, options.apiKey);
      for (const [method, pattern, handler] of routes) {
        const match = pattern.exec(url.pathname);
        if (match && method === request.method) {
          return await handler({ request, response, url, params: match.slice(1).map(decodeURIComponent) });
        }
      }
      throw new SandboxRequestError(404, 'route_unknown', `No route ${request.method} ${url.pathname}.`);
    } catch (error) {
      if (response.headersSent || response.destroyed) return;
      if (error instanceof SandboxRequestError) return sendError(response, error);
      logger.error(
        `${request.method} ${url.pathname} (${requestId}) failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
      sendError(response, new SandboxRequestError(500, 'internal_error', 'The sandbox failed.'));
    }
  }

  return createServer((request, response) => void handle(request, response));
}

function answerOfClaim(claim: Exclude<ReturnType<IdempotencyKeys['claim']>, { kind: 'claimed' }>): Answer {
  switch (claim.kind) {
    case 'replay':
      return { ...claim.answer, replayed: true };
    case 'mismatch':
      throw new SandboxRequestError(
        422,
        'idempotency_key_reused',
        'This Idempotency-Key was used with other parameters.',
      );
    case 'in_flight':
      throw new SandboxRequestError(
        409,
        'idempotency_key_in_use',
        'A request with this Idempotency-Key is in progress; retry later.',
      );
  }
}

function processingError(): SandboxRequestError {
  return new SandboxRequestError(
    500,
    'processing_error',
    'The provider failed to process the request; nothing was done.',
  );
}

function authenticate(request: IncomingMessage, apiKey: string): void {
  const given = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
  const expected = Buffer.from(apiKey);
  const actual = Buffer.from(given);
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
    throw new SandboxRequestError(
      401,
      'unauthorized',
      'A valid API key is required (Authorization: Bearer <key>).',
    );
  }
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT_BYTES)
      throw new SandboxRequestError(413, 'body_too_large', `The body exceeds ${BODY_LIMIT_BYTES} bytes.`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new SandboxRequestError(400, 'malformed_json', 'The body is not valid JSON.');
  }
}

/** Sends the answer, unless the client is gone (it hung up during a hold). */
function sendAnswer(response: ServerResponse, answer: Answer): void {
  if (response.destroyed || !response.socket || response.socket.destroyed) return;
  response.writeHead(answer.status, {
    'content-type': 'application/json',
    ...(answer.replayed ? { 'idempotent-replayed': 'true' } : {}),
  });
  response.end(answer.body);
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  sendAnswer(response, { status, body: JSON.stringify(body) });
}

function sendError(response: ServerResponse, error: SandboxRequestError): void {
  const type =
    error.status === 401
      ? 'authentication_error'
      : error.status >= 500
        ? 'api_error'
        : 'invalid_request_error';
  sendJson(response, error.status, {
    error: { type, code: error.code, message: error.message, ...(error.param ? { param: error.param } : {}) },
  });
}
