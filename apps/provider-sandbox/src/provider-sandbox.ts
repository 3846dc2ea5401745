import { randomBytes } from 'node:crypto';
import type { Faults } from './sandbox-faults';
import type { Charge, EventType, Payout, PayoutCharge, Refund, SandboxEvent } from './sandbox-objects';
import type { ChargeParams, ListQuery, PayoutParams, PlantedChargeParams } from './sandbox-requests';
import type {
  Decision,
  IdempotencyRecord,
  SandboxState,
  SandboxStore,
  StoreOp,
  StoredEvent,
} from './sandbox-store';
import { invalidParameter, notFound, SandboxRequestError } from './sandbox.errors';

/** An HTTP answer: what is sent, and what is stored for a replay. */
export interface Answer {
  status: number;
  body: string;
  /** A stored answer sent again (`Idempotent-Replayed: true`); never stored itself. */
  replayed?: boolean;
}

/** The Idempotency-Key a change is recorded under, with the request's fingerprint. */
export interface IdempotencyScope {
  operation: string;
  key: string;
  fingerprint: string;
}

export interface Page<Item> {
  data: Item[];
  hasMore: boolean;
}

export interface SandboxCounters {
  charges: { total: number; dropped: number; succeeded: number; failed: number; refunded: number };
  refunds: number;
  payouts: number;
  events: { total: number; pending: number; deliveries: number; attempts: number };
  faultsInjected: Faults['injected'];
  /** With `?reference=`: every charge ever made with it, dropped ones included. */
  byReference?: { reference: string; charges: number; chargeIds: string[] };
}

/**
 * The provider's business: charges, refunds, payouts and the events they emit. Every change is
 * one store commit that also holds its webhook event and, for a request with an Idempotency-Key,
 * the answer to replay — so a charge, its event and its key exist together or not at all.
 */
export class ProviderSandbox {
  constructor(
    private readonly store: SandboxStore,
    private readonly faults: Faults,
    private readonly options: { payoutFeeBps: number; onEvent: () => void; now?: () => Date },
  ) {}

  /**
   * Charges: `pm_card_declined` fails with `card_declined`, every other accepted method succeeds.
   * @throws SandboxRequestError 503 when the sandbox was reset since `generation`
   */
  async createCharge(params: ChargeParams, scope: IdempotencyScope, generation: number): Promise<Answer> {
    const answer = await this.store.commit(() => {
      this.assertGeneration(generation);
      const declined = params.paymentMethod === 'pm_card_declined';
      const charge: Charge = {
        id: newId('ch'),
        reference: params.reference,
        amount: params.amount,
        currency: params.currency,
        paymentMethod: params.paymentMethod,
        status: declined ? 'failed' : 'succeeded',
        failureCode: declined ? 'card_declined' : null,
        refundedAmount: 0,
        refunds: [],
        metadata: params.metadata,
        payoutId: null,
        createdAt: this.now().toISOString(),
      };
      return this.recorded(scope, { status: 201, body: JSON.stringify(charge) }, [
        { op: 'charge', charge },
        this.eventOp(declined ? 'charge.failed' : 'charge.succeeded', charge),
      ]);
    });
    this.options.onEvent();
    return answer;
  }

  /**
   * Refunds `amount` (default: what is left) of a succeeded charge; the charge becomes `refunded`
   * when nothing is left. Emits `charge.refunded` with the updated charge.
   * @throws SandboxRequestError 404 for an unknown charge, 422 `charge_not_refundable` (failed or fully
   *   refunded) or `refund_exceeds_charge`, 503 after a reset since `generation`
   */
  async refundCharge(
    chargeId: string,
    params: { amount?: number },
    scope: IdempotencyScope,
    generation: number,
  ): Promise<Answer> {
    const answer = await this.store.commit((state) => {
      this.assertGeneration(generation);
      const current = visibleCharge(state, chargeId);
      if (current.status !== 'succeeded') {
        throw new SandboxRequestError(
          422,
          'charge_not_refundable',
          `Charge ${chargeId} is ${current.status}.`,
        );
      }
      const left = current.amount - current.refundedAmount;
      const amount = params.amount ?? left;
      if (amount > left) {
        throw new SandboxRequestError(
          422,
          'refund_exceeds_charge',
          `The refund (${amount}) exceeds what is left of the charge (${left}).`,
          'amount',
        );
      }
      const refund: Refund = { id: newId('re'), chargeId, amount, createdAt: this.now().toISOString() };
      const refundedAmount = current.refundedAmount + amount;
      const charge: Charge = {
        ...current,
        refundedAmount,
        refunds: [...current.refunds, refund],
        status: refundedAmount === current.amount ? 'refunded' : 'succeeded',
      };
      return this.recorded(scope, { status: 201, body: JSON.stringify({ refund, charge }) }, [
        { op: 'charge', charge },
        this.eventOp('charge.refunded', charge),
      ]);
    });
    this.options.onEvent();
    return answer;
  }

  /**
   * Pays out, per (company, currency), every visible succeeded charge with a `metadata.companyId`
   * that no payout has paid yet: each counted at its amount less refunds so far, minus a fee of
   * `payoutFeeBps` of the total (rounded half up). Emits `payout.paid` per payout. A charge is paid
   * out once: it carries the payout's id from then on.
   */
  async runPayouts(params: PayoutParams, scope?: IdempotencyScope): Promise<Answer> {
    const answer = await this.store.commit((state) => {
      const groups = new Map<string, Charge[]>();
      for (const { charge, dropped } of state.charges.values()) {
        const companyId = charge.metadata.companyId;
        if (dropped || charge.status !== 'succeeded' || charge.payoutId !== null || companyId === undefined)
          continue;
        if (charge.amount === charge.refundedAmount) continue;
        if (params.companyId !== undefined && companyId !== params.companyId) continue;
        if (params.currency !== undefined && charge.currency !== params.currency) continue;
        const group = `${companyId}\u0000${charge.currency}`;
        groups.set(group, [...(groups.get(group) ?? []), charge]);
      }
      const ops: StoreOp[] = [];
      const payouts: Payout[] = [];
      const paidAt = this.now().toISOString();
      for (const charges of groups.values()) {
        const paid: PayoutCharge[] = charges.map((charge) => ({
          id: charge.id,
          amount: charge.amount - charge.refundedAmount,
        }));
        const gross = paid.reduce((sum, charge) => sum + BigInt(charge.amount), 0n);
        const fee = (gross * BigInt(this.options.payoutFeeBps) + 5000n) / 10000n;
        const payout: Payout = {
          id: newId('po'),
          companyId: charges[0].metadata.companyId,
          currency: charges[0].currency,
          paidAt,
          amount: Number(gross - fee),
          feeAmount: Number(fee),
          charges: paid,
        };
        payouts.push(payout);
        ops.push({ op: 'payout', payout }, this.eventOp('payout.paid', payout));
        for (const charge of charges) ops.push({ op: 'charge', charge: { ...charge, payoutId: payout.id } });
      }
      const answer = { status: payouts.length > 0 ? 201 : 200, body: JSON.stringify({ data: payouts }) };
      if (payouts.length === 0) return { ops: [], result: answer };
      return scope === undefined ? { ops, result: answer } : this.recorded(scope, answer, ops);
    });
    this.options.onEvent();
    return answer;
  }

  /** A charge nobody asked for through the API (reconciliation tests): no key, no faults, a webhook only when asked. */
  async plantCharge(params: PlantedChargeParams): Promise<Charge> {
    const charge = await this.store.commit((): Decision<Charge> => {
      const planted: Charge = {
        id: newId('ch'),
        reference: params.reference,
        amount: params.amount,
        currency: params.currency,
        paymentMethod: params.paymentMethod,
        status: params.status,
        failureCode: params.failureCode,
        refundedAmount: 0,
        refunds: [],
        metadata: params.metadata,
        payoutId: null,
        createdAt: params.createdAt ?? this.now().toISOString(),
      };
      const ops: StoreOp[] = [{ op: 'charge', charge: planted }];
      if (params.webhook)
        ops.push(this.eventOp(params.status === 'failed' ? 'charge.failed' : 'charge.succeeded', planted));
      return { ops, result: planted };
    });
    this.options.onEvent();
    return charge;
  }

  /**
   * Forgets a charge: the API answers 404 for it, lists and payouts skip it; counters still count it.
   * @throws SandboxRequestError 404 for an unknown (or already dropped) charge
   */
  dropCharge(chargeId: string): Promise<void> {
    return this.store.commit((state) => {
      visibleCharge(state, chargeId);
      return { ops: [{ op: 'drop', chargeId }], result: undefined };
    });
  }

  /** @throws SandboxRequestError 404 */
  getCharge(chargeId: string): Charge {
    return visibleCharge(this.store.state, chargeId);
  }

  /** Visible charges in the order they were made, filtered. @throws SandboxRequestError 400 for a bad cursor */
  listCharges(query: ListQuery): Page<Charge> {
    const { state } = this.store;
    const rows =
      query.reference === undefined
        ? [...state.charges.values()]
        : (state.chargeIdsByReference.get(query.reference) ?? []).map((id) => state.charges.get(id)!);
    return page(
      rows
        .filter((row) => !row.dropped)
        .filter((row) => query.companyId === undefined || row.charge.metadata.companyId === query.companyId)
        .map((row) => ({
          seq: row.seq,
          id: row.charge.id,
          createdAt: row.charge.createdAt,
          item: row.charge,
        })),
      query,
      state.charges.get(query.startingAfter ?? '')?.seq,
    );
  }

  /** @throws SandboxRequestError 404 */
  getPayout(payoutId: string): Payout {
    const row = this.store.state.payouts.get(payoutId);
    if (!row) throw notFound('payout', payoutId);
    return row.payout;
  }

  /** Payouts in the order they were made; `createdFrom`/`createdTo` filter `paidAt`. */
  listPayouts(query: ListQuery): Page<Payout> {
    const { state } = this.store;
    return page(
      [...state.payouts.values()]
        .filter((row) => query.companyId === undefined || row.payout.companyId === query.companyId)
        .map((row) => ({ seq: row.seq, id: row.payout.id, createdAt: row.payout.paidAt, item: row.payout })),
      query,
      state.payouts.get(query.startingAfter ?? '')?.seq,
    );
  }

  /** Every event with its delivery state, oldest first (admin). */
  listEvents(): Array<Omit<StoredEvent, 'body'> & { data: unknown }> {
    return [...this.store.state.events.values()].map(({ event }) => {
      const { body, ...delivery } = event;
      return { ...delivery, data: (JSON.parse(body) as SandboxEvent).data };
    });
  }

  counters(reference?: string): SandboxCounters {
    const { state } = this.store;
    const charges = { total: 0, dropped: 0, succeeded: 0, failed: 0, refunded: 0 };
    let refunds = 0;
    for (const { charge, dropped } of state.charges.values()) {
      charges.total += 1;
      if (dropped) charges.dropped += 1;
      else charges[charge.status] += 1;
      refunds += charge.refunds.length;
    }
    const events = {
      total: state.events.size,
      pending: state.pendingEventIds.size,
      deliveries: 0,
      attempts: 0,
    };
    for (const { event } of state.events.values()) {
      events.deliveries += event.delivered;
      events.attempts += event.attempts;
    }
    const counters: SandboxCounters = {
      charges,
      refunds,
      payouts: state.payouts.size,
      events,
      faultsInjected: { ...this.faults.injected },
    };
    if (reference !== undefined) {
      const chargeIds = state.chargeIdsByReference.get(reference) ?? [];
      counters.byReference = { reference, charges: chargeIds.length, chargeIds };
    }
    return counters;
  }

  private recorded<Result extends Answer>(
    scope: IdempotencyScope,
    answer: Result,
    ops: StoreOp[],
  ): Decision<Result> {
    const record: IdempotencyRecord = { ...scope, status: answer.status, body: answer.body };
    return { ops: [...ops, { op: 'idempotency', record }], result: answer };
  }

  private eventOp(type: EventType, data: Charge | Payout): StoreOp {
    const createdAt = this.now();
    const id = newId('evt');
    const event: StoredEvent = {
      id,
      type,
      createdAt: createdAt.toISOString(),
      body: JSON.stringify({ id, type, createdAt: createdAt.toISOString(), data }),
      copies: this.faults.eventCopies(),
      delivered: 0,
      attempts: 0,
      failures: 0,
      nextAttemptAt: createdAt.getTime() + this.faults.firstAttemptDelayMs(),
      lastError: null,
    };
    return { op: 'event', event };
  }

  private assertGeneration(generation: number): void {
    if (generation !== this.store.generation) {
      throw new SandboxRequestError(
        503,
        'sandbox_reset',
        'The sandbox was reset while this request was held.',
      );
    }
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }
}

/** `prefix_` and 24 random hex digits, e.g. `ch_5f0c…`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

function visibleCharge(state: SandboxState, chargeId: string): Charge {
  const row = state.charges.get(chargeId);
  if (!row || row.dropped) throw notFound('charge', chargeId);
  return row.charge;
}

interface Listed<Item> {
  seq: number;
  id: string;
  createdAt: string;
  item: Item;
}

function page<Item>(rows: Array<Listed<Item>>, query: ListQuery, afterSeq: number | undefined): Page<Item> {
  if (query.startingAfter !== undefined && afterSeq === undefined) {
    throw invalidParameter('startingAfter', `No object ${query.startingAfter} to start after.`);
  }
  const from = query.createdFrom?.getTime() ?? -Infinity;
  const to = query.createdTo?.getTime() ?? Infinity;
  const matching = rows
    .filter((row) => afterSeq === undefined || row.seq > afterSeq)
    .filter((row) => {
      const at = Date.parse(row.createdAt);
      return at >= from && at < to;
    })
    .sort((a, b) => a.seq - b.seq);
  return {
    data: matching.slice(0, query.limit).map((row) => row.item),
    hasMore: matching.length > query.limit,
  };
}
