import type {
  ChargeOutcome,
  ChargeRequest,
  PaymentProvider,
  ProviderCallOptions,
  ProviderListRange,
  ProviderReadOptions,
  RefundOutcome,
  RefundRequest,
  RejectedOutcome,
  UnknownOutcome,
} from '../payment-provider';
import {
  PaymentProviderAmbiguousReferenceError,
  PaymentProviderRequestError,
  PaymentProviderUnavailableError,
} from '../payment-provider.errors';
import type { ProviderCharge, ProviderPayout, ProviderRefund } from '../provider-objects';

export interface SandboxPaymentProviderOptions {
  /** The sandbox's base URL, e.g. `http://127.0.0.1:4010` (PAYMENT_PROVIDER_URL). */
  baseUrl: string;
  /** Its secret API key (Authorization: Bearer). */
  apiKey: string;
  /** Reads without their own `timeoutMs`. Default 10 000. */
  readTimeoutMs?: number;
  /** Page size of the list calls (1–1000). Default 100. */
  pageSize?: number;
  /** A test's stand-in for the global fetch. */
  fetch?: typeof fetch;
}

/** An HTTP exchange's result: a complete answer, or none (the request may or may not have been done). */
type Exchange = { kind: 'answer'; status: number; body: unknown } | UnknownOutcome;

const CHARGE_STATUSES = new Set(['succeeded', 'failed', 'refunded']);

/**
 * The payment provider port over the provider sandbox's HTTP API (docs/provider-sandbox.md), with
 * global fetch and a timeout per call covering the whole answer. Classification, the part an
 * adapter for a real provider must get right:
 * - a complete 2xx with a charge → `succeeded` (status `succeeded` or `refunded`) or `failed`;
 * - no complete answer (timeout, refused, reset, the connection destroyed after the charge was
 *   made) → `unknown`, and so are 5xx, 409 `idempotency_key_in_use`, 401/403, 429 and an
 *   unreadable 2xx;
 * - any other 4xx → `rejected` with the sandbox's code: that request charged nothing.
 */
export class SandboxPaymentProvider implements PaymentProvider {
  readonly name = 'sandbox';
  private readonly baseUrl: string;
  private readonly fetch: typeof fetch;
  private readonly readTimeoutMs: number;
  private readonly pageSize: number;

  constructor(private readonly options: SandboxPaymentProviderOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetch = options.fetch ?? fetch;
    this.readTimeoutMs = options.readTimeoutMs ?? 10_000;
    this.pageSize = options.pageSize ?? 100;
  }

  async createCharge(request: ChargeRequest, options: ProviderCallOptions): Promise<ChargeOutcome> {
    const exchange = await this.exchange('POST', '/v1/charges', options.timeoutMs, {
      body: {
        reference: request.reference,
        amount: request.amount,
        currency: request.currency,
        paymentMethod: request.paymentMethod,
        metadata: request.metadata,
      },
      idempotencyKey: options.idempotencyKey,
    });
    if (exchange.kind !== 'answer') return exchange;
    if (!isSuccess(exchange.status)) return classifyRefusal(exchange.status, exchange.body);
    if (!isCharge(exchange.body)) return unreadable(exchange.status);
    const charge = exchange.body;
    return charge.status === 'failed'
      ? { kind: 'failed', charge, failureCode: charge.failureCode ?? 'unknown' }
      : { kind: 'succeeded', charge };
  }

  async refundCharge(request: RefundRequest, options: ProviderCallOptions): Promise<RefundOutcome> {
    const exchange = await this.exchange(
      'POST',
      `/v1/charges/${encodeURIComponent(request.chargeId)}/refunds`,
      options.timeoutMs,
      {
        body: request.amount === undefined ? {} : { amount: request.amount },
        idempotencyKey: options.idempotencyKey,
      },
    );
    if (exchange.kind !== 'answer') return exchange;
    if (!isSuccess(exchange.status)) return classifyRefusal(exchange.status, exchange.body);
    const body = exchange.body as { refund?: ProviderRefund; charge?: unknown } | null;
    if (!body || typeof body.refund?.id !== 'string' || !isCharge(body.charge))
      return unreadable(exchange.status);
    return { kind: 'refunded', refund: body.refund, charge: body.charge };
  }

  async findChargeByReference(
    reference: string,
    options?: ProviderReadOptions,
  ): Promise<ProviderCharge | null> {
    const page = await this.read<{ data: ProviderCharge[] }>(
      `/v1/charges?${new URLSearchParams({ reference, limit: '2' })}`,
      options,
    );
    if (page.data.length > 1) {
      throw new PaymentProviderAmbiguousReferenceError(
        reference,
        page.data.map((charge) => charge.id),
      );
    }
    return page.data[0] ?? null;
  }

  listCharges(range: ProviderListRange, options?: ProviderReadOptions): AsyncIterable<ProviderCharge> {
    return this.pages<ProviderCharge>('/v1/charges', range, options);
  }

  listPayouts(range: ProviderListRange, options?: ProviderReadOptions): AsyncIterable<ProviderPayout> {
    return this.pages<ProviderPayout>('/v1/payouts', range, options);
  }

  private async *pages<Item extends { id: string }>(
    path: string,
    range: ProviderListRange,
    options: ProviderReadOptions | undefined,
  ): AsyncIterable<Item> {
    const query = new URLSearchParams({
      createdFrom: range.createdFrom.toISOString(),
      createdTo: range.createdTo.toISOString(),
      limit: String(this.pageSize),
    });
    if (range.companyId !== undefined) query.set('companyId', range.companyId);
    for (;;) {
      const page = await this.read<{ data: Item[]; hasMore: boolean }>(`${path}?${query}`, options);
      yield* page.data;
      if (!page.hasMore || page.data.length === 0) return;
      query.set('startingAfter', page.data[page.data.length - 1].id);
    }
  }

  /**
   * A GET whose answer must be a 2xx with a JSON object.
   * @throws PaymentProviderUnavailableError, PaymentProviderRequestError
   */
  private async read<Body>(path: string, options: ProviderReadOptions | undefined): Promise<Body> {
    const exchange = await this.exchange('GET', path, options?.timeoutMs ?? this.readTimeoutMs);
    if (exchange.kind !== 'answer')
      throw new PaymentProviderUnavailableError(exchange.reason, exchange.detail);
    if (isSuccess(exchange.status)) {
      if (typeof exchange.body !== 'object' || exchange.body === null) {
        throw new PaymentProviderUnavailableError(
          'unreadable_answer',
          `answered ${exchange.status} without a JSON object`,
        );
      }
      return exchange.body as Body;
    }
    const refusal = classifyRefusal(exchange.status, exchange.body);
    if (refusal.kind === 'unknown') throw new PaymentProviderUnavailableError(refusal.reason, refusal.detail);
    throw new PaymentProviderRequestError(refusal.status, refusal.code, refusal.message);
  }

  /** One request and its complete answer, within `timeoutMs`; never throws. */
  private async exchange(
    method: string,
    path: string,
    timeoutMs: number,
    send?: { body: unknown; idempotencyKey: string },
  ): Promise<Exchange> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.apiKey}` };
    if (send) {
      headers['content-type'] = 'application/json';
      headers['idempotency-key'] = send.idempotencyKey;
    }
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const response = await this.fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: send ? JSON.stringify(send.body) : undefined,
        redirect: 'manual',
        signal,
      });
      // The timeout covers the body too: a charge answered with headers but no body is not known.
      const text = await response.text();
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = undefined;
      }
      return { kind: 'answer', status: response.status, body };
    } catch (error) {
      if (signal.aborted) {
        return { kind: 'unknown', reason: 'timeout', detail: `no complete answer within ${timeoutMs} ms` };
      }
      return { kind: 'unknown', reason: 'no_answer', detail: describe(error) };
    }
  }
}

function isSuccess(status: number): boolean {
  return status >= 200 && status <= 299;
}

/** A non-2xx answer: `unknown` when the request may still be done or redone, else `rejected`. */
function classifyRefusal(status: number, body: unknown): RejectedOutcome | UnknownOutcome {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  const code = typeof error?.code === 'string' ? error.code : `http_${status}`;
  const message = typeof error?.message === 'string' ? error.message : `answered ${status}`;
  const unknown = (reason: UnknownOutcome['reason']): UnknownOutcome => ({
    kind: 'unknown',
    reason,
    detail: `answered ${status} ${code}: ${message}`,
  });
  if (status >= 500) return unknown('server_error');
  if (status === 409 && code === 'idempotency_key_in_use') return unknown('in_progress');
  if (status === 401 || status === 403) return unknown('not_authorized');
  if (status === 429) return unknown('rate_limited');
  if (status < 400) return unknown('unreadable_answer');
  return { kind: 'rejected', status, code, message };
}

function unreadable(status: number): UnknownOutcome {
  return {
    kind: 'unknown',
    reason: 'unreadable_answer',
    detail: `answered ${status} without the expected object`,
  };
}

function isCharge(value: unknown): value is ProviderCharge {
  const charge = value as Partial<ProviderCharge> | null | undefined;
  return (
    typeof charge === 'object' &&
    charge !== null &&
    typeof charge.id === 'string' &&
    typeof charge.reference === 'string' &&
    typeof charge.amount === 'number' &&
    typeof charge.status === 'string' &&
    CHARGE_STATUSES.has(charge.status)
  );
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as (Error & { code?: string }) | undefined;
  return cause instanceof Error ? `${error.message}: ${cause.code ?? cause.message}` : error.message;
}
