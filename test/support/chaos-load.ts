import { randomUUID } from 'node:crypto';
import {
  LedgerkeyApiError,
  LedgerkeyClient,
  LedgerkeyConnectionError,
  PaymentStillProcessingError,
  type CreatePaymentDto,
  type CreateResult,
  type IssueCreditNoteDto,
  type IssueInvoiceDto,
  type RecordPurchaseInvoiceDto,
  type RecordSettlementDto,
} from '../../libs/sdk/src';
import type { ApiProcess } from './api-process';
import type { ChaosTimeline } from './chaos-timeline';
import { anInvoice, newKey } from './invoice.builder';
import { aPurchaseInvoice } from './purchase-invoice.builder';
import { aSettlement } from './settlement.builder';
import type { TestCompany } from './test-app';
import type { WebhookReceiver } from './webhook-receiver';

/**
 * The mixed load of the chaos suite (test/chaos/mixed-faults.chaos-spec.ts): its companies, the
 * logical operations its lanes run, and each client's call of one.
 */

export const COMPANIES = 4;
export const API_PROCESSES = 2;
/** Base invoices per company that credit notes and settlements draw on: gross 1 210 000 each. */
export const BASE_INVOICES = 4;
/** Every third operation is sent to both API processes at once, with the same key and body. */
export const DUAL_EVERY = 3;
/** Payment methods of the payments, by their ordinal mod 10 (the rest pm_card_visa). */
export const PAYMENT_METHODS: Record<number, string> = {
  0: 'pm_card_declined',
  3: 'pm_card_lost_response',
  7: 'pm_card_timeout',
};

export const KINDS = ['invoice', 'credit_note', 'settlement', 'purchase_invoice', 'payment'] as const;
export type Kind = (typeof KINDS)[number];

export const TABLE: Record<Kind, string> = {
  invoice: 'invoices',
  credit_note: 'credit_notes',
  settlement: 'settlements',
  purchase_invoice: 'purchase_invoices',
  payment: 'payments',
};

export interface ChaosCompany extends TestCompany {
  index: number;
  /** One SDK client per API process: `clients[n]` talks to `api<n>` only. */
  clients: LedgerkeyClient[];
  baseInvoices: string[];
  webhookPath: string;
  webhookSecret: string;
}

/** One client's call of a logical operation (a dual operation has two). */
export interface Call {
  target: string;
  status?: number;
  id?: string;
  replayed?: boolean;
  attempts: number;
  error?: string;
  /** A payment's final status as its client was told. */
  paymentStatus?: string;
}

export interface LogicalOperation {
  kind: Kind;
  company: ChaosCompany;
  key: string;
  body: Record<string, unknown>;
  dual: boolean;
  calls: Call[];
}

/** What the companies are set up with: the API processes, one SDK client each, and the webhook receiver. */
export interface ChaosRig {
  apis: ApiProcess[];
  ports: number[];
  timeline: ChaosTimeline;
  receiver: WebhookReceiver;
  call(operation: LogicalOperation, slot: number): Promise<Call>;
}

/**
 * Companies (through api0's admin API), a webhook endpoint each, and their base invoices,
 * which are added to `operations`.
 */
export async function setUpChaosCompanies(
  operations: LogicalOperation[],
  rig: ChaosRig,
): Promise<ChaosCompany[]> {
  const { apis, ports, timeline, receiver, call } = rig;
  return Promise.all(
    Array.from({ length: COMPANIES }, async (_, index): Promise<ChaosCompany> => {
      const tenant = await apis[0].newCompany();
      const clients = ports.map(
        (port, slot) =>
          new LedgerkeyClient({
            baseUrl: `http://127.0.0.1:${port}`,
            apiKey: tenant.apiKey,
            fetch: timeline.recordingFetch(`api${slot}`),
            // Rides out a restart of an API (a few seconds) or of PostgreSQL.
            retry: { maxAttempts: 80, baseDelayMs: 50, maxDelayMs: 800, maxRetryAfterMs: 5_000 },
            timeoutMs: 5_000,
          }),
      );
      const webhookPath = `/company-${index}`;
      const endpoint = await fetch(`${apis[0].baseUrl}/v1/webhook-endpoints/create`, {
        method: 'POST',
        headers: {
          ...tenant.auth,
          'Content-Type': 'application/json',
          'Idempotency-Key': newKey('endpoint'),
        },
        body: JSON.stringify({ url: receiver.url(webhookPath), enabledEvents: ['*'] }),
      });
      expect(endpoint.status).toBe(201);
      const { secret } = (await endpoint.json()) as { secret: string };
      const company: ChaosCompany = {
        ...tenant,
        index,
        clients,
        baseInvoices: [],
        webhookPath,
        webhookSecret: secret,
      };
      for (let n = 0; n < BASE_INVOICES; n += 1) {
        const base: LogicalOperation = {
          kind: 'invoice',
          company,
          key: newKey(`chaos-base-${index}-${n}`),
          body: anInvoice().withLine({ quantity: '1', unitPrice: 1_000_000, vatRate: '21' }).build(),
          dual: false,
          calls: [],
        };
        operations.push(base);
        base.calls = [await call(base, n % API_PROCESSES)];
        expect(base.calls[0].status).toBe(201);
        company.baseInvoices.push(base.calls[0].id as string);
      }
      return company;
    }),
  );
}

export function nextOperation(companies: ChaosCompany[], index: number): LogicalOperation {
  const company = companies[index % COMPANIES];
  const kind = KINDS[Math.floor(index / COMPANIES) % KINDS.length];
  const target = company.baseInvoices[Math.floor(Math.random() * company.baseInvoices.length)];
  const tag = `${index}-${randomUUID().slice(0, 8)}`;
  let body: Record<string, unknown>;
  switch (kind) {
    case 'invoice':
      body = anInvoice()
        .withOrderId(`chaos-order-${tag}`)
        .withLine({ unitPrice: 100 + (index % 900) })
        .build();
      break;
    case 'credit_note':
      body = {
        invoiceId: target,
        reason: 'other',
        lines: [{ description: `partial ${tag}`, quantity: '1', unitPrice: 100, vatRate: '21' }],
      };
      break;
    case 'settlement':
      body = aSettlement().forPayout(`po_chaos_${tag}`).withFee(10).allocating(target, 1_000).build();
      break;
    case 'purchase_invoice':
      body = aPurchaseInvoice()
        .withSupplier({ name: `Supplier ${tag}`, countryCode: 'LT' })
        .withLine({ quantity: '1', unitPrice: 2_000 + (index % 900) })
        .build();
      break;
    case 'payment':
      body = {
        invoiceId: target,
        amount: 500 + (index % 400),
        // By the payment's own ordinal (operation kinds rotate per COMPANIES operations).
        paymentMethod:
          PAYMENT_METHODS[
            (Math.floor(index / (COMPANIES * KINDS.length)) * COMPANIES + (index % COMPANIES)) % 10
          ] ?? 'pm_card_visa',
      };
      break;
  }
  return { kind, company, key: `chaos-${kind}-${tag}`, body, dual: index % DUAL_EVERY === 0, calls: [] };
}

/** One client's call of `operation` through `api<slot>`; `abortLoad` stops its retries. */
export async function callOperation(
  operation: LogicalOperation,
  slot: number,
  abortLoad: AbortController,
): Promise<Call> {
  const client = operation.company.clients[slot];
  const options = { idempotencyKey: operation.key, signal: abortLoad.signal };
  const target = `api${slot}`;
  try {
    let result: CreateResult<{ id: string }>;
    switch (operation.kind) {
      case 'invoice':
        result = await client.salesInvoices.create(operation.body as unknown as IssueInvoiceDto, options);
        break;
      case 'credit_note':
        result = await client.creditNotes.create(operation.body as unknown as IssueCreditNoteDto, options);
        break;
      case 'settlement':
        result = await client.settlements.create(operation.body as unknown as RecordSettlementDto, options);
        break;
      case 'purchase_invoice':
        result = await client.purchaseInvoices.create(
          operation.body as unknown as RecordPurchaseInvoiceDto,
          options,
        );
        break;
      case 'payment': {
        // Same key until the outcome is known: a 202 (provider fault, sandbox down) is re-sent.
        const paid = await client.payments.createAndWait(operation.body as unknown as CreatePaymentDto, {
          ...options,
          maxWaitMs: 90_000,
          pollIntervalMs: 200,
          maxPollIntervalMs: 2_000,
        });
        return {
          target,
          status: paid.status,
          id: paid.data.id,
          replayed: paid.replayed,
          attempts: paid.attempts,
          paymentStatus: paid.data.status,
        };
      }
    }
    return {
      target,
      status: result.status,
      id: result.data.id,
      replayed: result.replayed,
      attempts: result.attempts,
    };
  } catch (error) {
    if (
      error instanceof LedgerkeyApiError ||
      error instanceof LedgerkeyConnectionError ||
      error instanceof PaymentStillProcessingError
    ) {
      return { target, attempts: error.attempts, error: `${error.name}: ${error.message}` };
    }
    throw error;
  }
}

export async function listEventIds(company: ChaosCompany): Promise<string[]> {
  const ids: string[] = [];
  for (;;) {
    const page = await company.clients[1].events.list({ limit: 100, startingAfter: ids.at(-1) });
    ids.push(...page.data.map((event) => event.id));
    if (!page.hasMore) return ids;
  }
}
