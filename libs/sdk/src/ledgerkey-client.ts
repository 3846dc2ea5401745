import { type Client, createClient, createConfig } from './generated/client/index.js';
import {
  createCreditNote,
  createPayment,
  createPurchaseInvoice,
  createSalesInvoice,
  createSettlement,
  getCreditNote,
  getEvent,
  getPayment,
  getPurchaseInvoice,
  getSalesInvoice,
  getSettlement,
  getTrialBalance,
  listCreditNotes,
  listEvents,
  listJournalEntries,
  listPayments,
  listPurchaseInvoices,
  listSalesInvoices,
  listSettlements,
} from './generated/sdk.gen.js';
import type {
  CreatePaymentDto,
  CreditNoteListView,
  CreditNoteView,
  EventListView,
  EventView,
  InvoiceListView,
  InvoiceView,
  IssueCreditNoteDto,
  IssueInvoiceDto,
  JournalEntryListView,
  JournalEntryView,
  ListCreditNotesData,
  ListEventsData,
  ListJournalEntriesData,
  ListPurchaseInvoicesData,
  ListSalesInvoicesData,
  ListSettlementsData,
  PaymentListView,
  PaymentView,
  PurchaseInvoiceListView,
  PurchaseInvoiceView,
  RecordPurchaseInvoiceDto,
  RecordSettlementDto,
  SettlementListView,
  SettlementView,
  TrialBalanceView,
} from './generated/types.gen.js';
import { abortableSleep, type Answer, type Attempt, type AttemptResult, sendAttempts } from './attempts.js';
import type { CreateResult, ListQuery } from './create-result.js';
import {
  type FinalPaymentResult,
  type PaymentListQuery,
  type PaymentResult,
  PaymentStillProcessingError,
  type PaymentWaitOptions,
  pollDelayMs,
  toPaymentResult,
} from './payments.js';
import { DEFAULT_RETRY, type ResolvedRetryOptions, type RetryOptions } from './retry-policy.js';

export interface LedgerkeyClientOptions {
  /** e.g. `http://127.0.0.1:3000` */
  baseUrl: string;
  /** Your company's API key (`lk_…`). */
  apiKey: string;
  retry?: RetryOptions;
  /** One attempt is abandoned (and retried with the same key) after this long. Default 10000. */
  timeoutMs?: number;
  /** Default: the global `fetch`. */
  fetch?: typeof fetch;
  /** Makes the key of a `create` called without one. Default: `crypto.randomUUID()`. */
  generateKey?: () => string;
  /** Waits between attempts (tests replace it). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Uniform in [0, 1): the jitter source (tests replace it). */
  random?: () => number;
  /** Milliseconds since the epoch: the clock of payment wait deadlines (tests replace it). */
  now?: () => number;
}

export interface CallOptions {
  /** Cancels the call, its current attempt and any wait between attempts. */
  signal?: AbortSignal;
  /** Overrides the client's retry options for this call. */
  retry?: RetryOptions;
  timeoutMs?: number;
}

export interface CreateOptions extends CallOptions {
  /**
   * One key per logical operation, e.g. `order-1041-invoice`. Without one the SDK makes a
   * UUID once for this call and reuses it on every attempt. Reuse the same key (and body) to
   * retry an operation whose outcome you did not learn; never reuse it for another operation.
   */
  idempotencyKey?: string;
  /**
   * Called with the key before the first attempt, and awaited: persist it where a crash of
   * your process cannot lose it. If it throws, nothing is sent.
   */
  onKey?: (idempotencyKey: string) => void | Promise<void>;
}

/** How long `payments.createAndWait` and `payments.waitForFinal` wait by default: two minutes. */
const DEFAULT_PAYMENT_WAIT_MS = 120_000;

/** Each list's query: pagination plus its filters, typed from the OpenAPI document. */
export type InvoiceListQuery = NonNullable<ListSalesInvoicesData['query']>;
export type CreditNoteListQuery = NonNullable<ListCreditNotesData['query']>;
export type SettlementListQuery = NonNullable<ListSettlementsData['query']>;
export type PurchaseInvoiceListQuery = NonNullable<ListPurchaseInvoicesData['query']>;
export type EventListQuery = NonNullable<ListEventsData['query']>;
export type JournalEntryListQuery = NonNullable<ListJournalEntriesData['query']>;

interface ListPage<T> {
  data: T[];
  hasMore: boolean;
}

/**
 * The ledgerkey API with safe retries. Every `create` sends one Idempotency-Key for all of
 * its attempts and retries network errors, timeouts, `409 idempotency_key_in_use` (after
 * `Retry-After`), 429 and 5xx with capped exponential backoff and full jitter; any other
 * error answer is thrown at once as a {@link LedgerkeyApiError}. Reads retry the same way.
 */
export class LedgerkeyClient {
  readonly salesInvoices = {
    create: (body: IssueInvoiceDto, options?: CreateOptions): Promise<CreateResult<InvoiceView>> =>
      this.create(options, (key, signal) =>
        createSalesInvoice({ client: this.client, body, headers: { 'Idempotency-Key': key }, signal }),
      ),
    get: (id: string, options?: CallOptions): Promise<InvoiceView> =>
      this.read(options, (signal) => getSalesInvoice({ client: this.client, path: { id }, signal })),
    list: (query?: InvoiceListQuery, options?: CallOptions): Promise<InvoiceListView> =>
      this.read(options, (signal) => listSalesInvoices({ client: this.client, query, signal })),
    /** Every invoice matching `query`, page after page: `for await (const invoice of …listAll({ … }))`. */
    listAll: (query?: InvoiceListQuery, options?: CallOptions): AsyncGenerator<InvoiceView> =>
      this.paginate(query, (page) => this.salesInvoices.list(page, options)),
  };

  readonly creditNotes = {
    create: (body: IssueCreditNoteDto, options?: CreateOptions): Promise<CreateResult<CreditNoteView>> =>
      this.create(options, (key, signal) =>
        createCreditNote({ client: this.client, body, headers: { 'Idempotency-Key': key }, signal }),
      ),
    get: (id: string, options?: CallOptions): Promise<CreditNoteView> =>
      this.read(options, (signal) => getCreditNote({ client: this.client, path: { id }, signal })),
    list: (query?: CreditNoteListQuery, options?: CallOptions): Promise<CreditNoteListView> =>
      this.read(options, (signal) => listCreditNotes({ client: this.client, query, signal })),
    listAll: (query?: CreditNoteListQuery, options?: CallOptions): AsyncGenerator<CreditNoteView> =>
      this.paginate(query, (page) => this.creditNotes.list(page, options)),
  };

  readonly settlements = {
    create: (body: RecordSettlementDto, options?: CreateOptions): Promise<CreateResult<SettlementView>> =>
      this.create(options, (key, signal) =>
        createSettlement({ client: this.client, body, headers: { 'Idempotency-Key': key }, signal }),
      ),
    get: (id: string, options?: CallOptions): Promise<SettlementView> =>
      this.read(options, (signal) => getSettlement({ client: this.client, path: { id }, signal })),
    list: (query?: SettlementListQuery, options?: CallOptions): Promise<SettlementListView> =>
      this.read(options, (signal) => listSettlements({ client: this.client, query, signal })),
    listAll: (query?: SettlementListQuery, options?: CallOptions): AsyncGenerator<SettlementView> =>
      this.paginate(query, (page) => this.settlements.list(page, options)),
  };

  readonly purchaseInvoices = {
    create: (
      body: RecordPurchaseInvoiceDto,
      options?: CreateOptions,
    ): Promise<CreateResult<PurchaseInvoiceView>> =>
      this.create(options, (key, signal) =>
        createPurchaseInvoice({ client: this.client, body, headers: { 'Idempotency-Key': key }, signal }),
      ),
    get: (id: string, options?: CallOptions): Promise<PurchaseInvoiceView> =>
      this.read(options, (signal) => getPurchaseInvoice({ client: this.client, path: { id }, signal })),
    list: (query?: PurchaseInvoiceListQuery, options?: CallOptions): Promise<PurchaseInvoiceListView> =>
      this.read(options, (signal) => listPurchaseInvoices({ client: this.client, query, signal })),
    listAll: (query?: PurchaseInvoiceListQuery, options?: CallOptions): AsyncGenerator<PurchaseInvoiceView> =>
      this.paginate(query, (page) => this.purchaseInvoices.list(page, options)),
  };

  /**
   * Payments through the payment provider. `create` answers final (`succeeded`, `failed`) or not
   * (`processing`: the provider's outcome is not known yet); `createAndWait` and `waitForFinal`
   * wait for a processing payment's outcome.
   */
  readonly payments = {
    /**
     * Charges an invoice. `final: false` (HTTP 202, `status: processing`) means the outcome is not
     * known yet — never a failure: call `createAndWait` with the same key and body (or poll with
     * `waitForFinal`) to learn it. Both `succeeded` and `failed` (a decline) are final.
     */
    create: (body: CreatePaymentDto, options?: CreateOptions): Promise<PaymentResult> =>
      this.createPayment(body, options),
    /**
     * Charges an invoice and waits for the final outcome: while the payment is `processing`, sends the
     * same request again with the SAME Idempotency-Key (which resumes that payment: the server asks
     * the provider for the charge before ever charging again), after `Retry-After` or a growing
     * backoff, until the answer is final or `maxWaitMs` has passed.
     * @throws PaymentStillProcessingError at the deadline: the outcome is still unknown (not failed);
     *   wait longer with the same key and body, or with `waitForFinal(error.payment.id)`
     * @throws LedgerkeyApiError, LedgerkeyConnectionError as `create`
     */
    createAndWait: (
      body: CreatePaymentDto,
      options?: CreateOptions & PaymentWaitOptions,
    ): Promise<FinalPaymentResult> => this.createPaymentAndWait(body, options),
    /**
     * Polls `GET /v1/payments/{id}` with a growing backoff until the payment is final (the recovery
     * worker resolves a processing payment without any client) or `maxWaitMs` has passed.
     * @throws PaymentStillProcessingError at the deadline
     */
    waitForFinal: (
      id: string,
      options?: CallOptions & PaymentWaitOptions,
    ): Promise<PaymentView & { status: 'succeeded' | 'failed' }> => this.waitForFinalPayment(id, options),
    get: (id: string, options?: CallOptions): Promise<PaymentView> =>
      this.read(options, (signal) => getPayment({ client: this.client, path: { id }, signal })),
    list: (query?: PaymentListQuery, options?: CallOptions): Promise<PaymentListView> =>
      this.read(options, (signal) => listPayments({ client: this.client, query, signal })),
    listAll: (query?: PaymentListQuery, options?: CallOptions): AsyncGenerator<PaymentView> =>
      this.paginate(query, (page) => this.payments.list(page, options)),
  };

  readonly events = {
    get: (id: string, options?: CallOptions): Promise<EventView> =>
      this.read(options, (signal) => getEvent({ client: this.client, path: { id }, signal })),
    list: (query?: EventListQuery, options?: CallOptions): Promise<EventListView> =>
      this.read(options, (signal) => listEvents({ client: this.client, query, signal })),
    /** In commit order by default: resume from the last event id you processed with `startingAfter`. */
    listAll: (query?: EventListQuery, options?: CallOptions): AsyncGenerator<EventView> =>
      this.paginate(query, (page) => this.events.list(page, options)),
  };

  readonly ledger = {
    entries: (query?: JournalEntryListQuery, options?: CallOptions): Promise<JournalEntryListView> =>
      this.read(options, (signal) => listJournalEntries({ client: this.client, query, signal })),
    allEntries: (query?: JournalEntryListQuery, options?: CallOptions): AsyncGenerator<JournalEntryView> =>
      this.paginate(query, (page) => this.ledger.entries(page, options)),
    trialBalance: (options?: CallOptions): Promise<TrialBalanceView> =>
      this.read(options, (signal) => getTrialBalance({ client: this.client, signal })),
  };

  /** The generated low-level client (configured with base URL and API key), for anything not wrapped here. */
  readonly client: Client;
  private readonly retry: ResolvedRetryOptions;
  private readonly timeoutMs: number;
  private readonly generateKey: () => string;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly now: () => number;

  constructor(options: LedgerkeyClientOptions) {
    this.client = createClient(
      createConfig({
        baseUrl: options.baseUrl.replace(/\/+$/, ''),
        auth: options.apiKey,
        fetch: options.fetch,
      }),
    );
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.generateKey = options.generateKey ?? (() => globalThis.crypto.randomUUID());
    this.sleep = options.sleep ?? abortableSleep;
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
  }

  private async createPayment(
    body: CreatePaymentDto,
    options: CreateOptions | undefined,
  ): Promise<PaymentResult> {
    const { result, headers } = await this.createAnswering(options, (key, signal) =>
      createPayment({ client: this.client, body, headers: { 'Idempotency-Key': key }, signal }),
    );
    return toPaymentResult(result, headers, this.now());
  }

  private async createPaymentAndWait(
    body: CreatePaymentDto,
    options: (CreateOptions & PaymentWaitOptions) | undefined,
  ): Promise<FinalPaymentResult> {
    const deadline = this.now() + (options?.maxWaitMs ?? DEFAULT_PAYMENT_WAIT_MS);
    let result = await this.createPayment(body, options);
    // One key for every request of the wait: each resumes the same payment, never a new one.
    const again = { ...options, idempotencyKey: result.idempotencyKey, onKey: undefined };
    let attempts = result.attempts;
    for (let poll = 0; !result.final; poll += 1) {
      const delayMs = pollDelayMs(poll, result.retryAfterMs, options, this.random);
      if (this.now() + delayMs > deadline) {
        throw new PaymentStillProcessingError(result.data, result.idempotencyKey, attempts);
      }
      await this.sleep(delayMs, options?.signal);
      result = await this.createPayment(body, again);
      attempts += result.attempts;
    }
    return { ...result, attempts };
  }

  private async waitForFinalPayment(
    id: string,
    options: (CallOptions & PaymentWaitOptions) | undefined,
  ): Promise<PaymentView & { status: 'succeeded' | 'failed' }> {
    const deadline = this.now() + (options?.maxWaitMs ?? DEFAULT_PAYMENT_WAIT_MS);
    let attempts = 0;
    for (let poll = 0; ; poll += 1) {
      const payment = await this.payments.get(id, options);
      attempts += 1;
      if (payment.status !== 'processing') return payment as PaymentView & { status: 'succeeded' | 'failed' };
      const delayMs = pollDelayMs(poll, undefined, options, this.random);
      if (this.now() + delayMs > deadline)
        throw new PaymentStillProcessingError(payment, undefined, attempts);
      await this.sleep(delayMs, options?.signal);
    }
  }

  private async create<T>(
    options: CreateOptions | undefined,
    attempt: (idempotencyKey: string, signal: AbortSignal) => Promise<AttemptResult<T>>,
  ): Promise<CreateResult<T>> {
    return (await this.createAnswering(options, attempt)).result;
  }

  /** `create`, and the headers of the answer it got. */
  private async createAnswering<T>(
    options: CreateOptions | undefined,
    attempt: (idempotencyKey: string, signal: AbortSignal) => Promise<AttemptResult<T>>,
  ): Promise<{ result: CreateResult<T>; headers: Headers }> {
    // The key is fixed here, once per logical call, before anything is sent.
    const idempotencyKey = options?.idempotencyKey ?? this.generateKey();
    await options?.onKey?.(idempotencyKey);
    const answer = await this.send(options, (signal) => attempt(idempotencyKey, signal), idempotencyKey);
    const headers = answer.response.headers;
    const expires = headers.get('idempotency-key-expires');
    const result = {
      data: answer.data,
      replayed: headers.get('idempotent-replayed') === 'true',
      idempotencyKey,
      status: answer.response.status,
      requestId: headers.get('x-request-id') ?? undefined,
      keyExpiresAt: expires === null || Number.isNaN(Date.parse(expires)) ? undefined : new Date(expires),
      attempts: answer.attempts,
    };
    return { result, headers };
  }

  /**
   * Every object of a list, fetching the next page when the previous one is consumed (each page
   * read retries like any read). Follows `startingAfter` from the first page; given
   * `endingBefore`, walks backwards from it instead, yielding objects moving away from the cursor.
   */
  private async *paginate<T extends { id: string }, Q extends ListQuery>(
    query: Q | undefined,
    fetchPage: (query: Q) => Promise<ListPage<T>>,
  ): AsyncGenerator<T> {
    const backwards = query?.endingBefore !== undefined;
    let next = { ...query } as Q;
    for (;;) {
      const page = await fetchPage(next);
      const items = backwards ? [...page.data].reverse() : page.data;
      for (const item of items) yield item;
      const last = items.at(-1);
      if (!page.hasMore || last === undefined) return;
      next = backwards ? { ...next, endingBefore: last.id } : { ...next, startingAfter: last.id };
    }
  }

  private async read<T>(options: CallOptions | undefined, attempt: Attempt<T>): Promise<T> {
    return (await this.send(options, attempt, undefined)).data;
  }

  /** Runs attempts until one gets a final answer (see {@link sendAttempts}). */
  private async send<T>(
    options: CallOptions | undefined,
    attempt: Attempt<T>,
    idempotencyKey: string | undefined,
  ): Promise<Answer<T>> {
    const settings = { retry: this.retry, timeoutMs: this.timeoutMs, sleep: this.sleep, random: this.random };
    return sendAttempts(settings, options, attempt, idempotencyKey);
  }
}
