import { randomUUID } from 'node:crypto';
import {
  type EffectAttempt,
  type EffectResult,
  type ExternalCall,
  type ExternalEffect,
  IdempotencyProtocol,
  type IdempotencyKeyRef,
  type IdempotencyOutcome,
  type IdempotentOperation,
  type OutcomeClassifier,
} from '@ledgerkey/idempotency';
import { startHandlerContext, type HandlerContext } from './handler-context';
import { anIdempotentCall } from './idempotent-call.builder';
import type { ProtocolWiring } from './protocol-spec';
import { TestClock } from './test-clock';

/**
 * The protocol for effects outside the database, on real PostgreSQL without HTTP: prepare (the key
 * `in_progress` with the operation's state) → perform (outside any transaction) → settle (fenced),
 * or 202 and release; retries and the recovery take unfinished keys over. The operation's state is
 * a row of the spec file's table; `perform` is scripted per test.
 */
export const TTL_SECONDS = 3600;
export const LEASE_SECONDS = 30;
/** One per spec file: files run in parallel, and each drops its own. */
const STATE = `handler_spec_external_operations_${randomUUID().slice(0, 8)}`;
export const OPERATION: IdempotentOperation<Answer> = {
  operation: 'test.charges.create',
  status: 201,
  location: (answer) => `/v1/charges/${answer.id}`,
};

export interface State {
  id: string;
}
export interface Answer {
  id: string;
  status: string;
}

export class RefusedForTest extends Error {
  readonly code = 'refused_for_test';
}

export const classifier: OutcomeClassifier = {
  classify: (error) =>
    error instanceof RefusedForTest
      ? {
          status: 422,
          headers: { 'Content-Type': 'application/problem+json; charset=utf-8' },
          body: JSON.stringify({ code: error.code }),
        }
      : null,
};

export let ctx: HandlerContext;
export let clock: TestClock;
export let protocol: IdempotencyProtocol;
export let outcomes: IdempotencyOutcome[];

/** Starts the context, the table of operations and the protocol for this spec file. */
export function useExternalEffectSpec(wiring: ProtocolWiring): void {
  beforeAll(async () => {
    ctx = await startHandlerContext();
    await ctx.db.query(
      `CREATE TABLE IF NOT EXISTS ${STATE} (tenant_id uuid NOT NULL, key text NOT NULL, id uuid NOT NULL,
                                            status text NOT NULL, settlements int NOT NULL DEFAULT 0)`,
    );
    clock = new TestClock();
    protocol = new IdempotencyProtocol({
      ttlSeconds: TTL_SECONDS,
      ...wiring(ctx),
      classifier,
      clock,
      observer: { observe: (_operation, outcome) => outcomes.push(outcome), purged: () => undefined },
    });
  });

  beforeEach(() => {
    outcomes = [];
  });

  afterAll(async () => {
    await ctx?.db.query(`DROP TABLE IF EXISTS ${STATE}`);
    await ctx?.close();
  });
}

/** What a test scripts: `perform` per attempt; the rest writes this file's table. */
export interface Script {
  perform?: (attempt: EffectAttempt, state: State) => Promise<EffectResult<string>>;
  prepare?: () => Promise<void>;
  settle?: () => Promise<void>;
}

const succeeded = (): Promise<EffectResult<string>> => Promise.resolve({ known: true, outcome: 'succeeded' });
export const unknown = (): Promise<EffectResult<string>> =>
  Promise.resolve({ known: false, reason: 'timeout' });

export function anEffect(
  script: Script = {},
): ExternalEffect<State, string, Answer> & { attempts: EffectAttempt[] } {
  const attempts: EffectAttempt[] = [];
  return {
    attempts,
    leaseSeconds: LEASE_SECONDS,
    retryAfterSeconds: 2,
    async prepare(ref) {
      await script.prepare?.();
      const id = randomUUID();
      await ctx.txHost.tx.query(
        `INSERT INTO ${STATE} (tenant_id, key, id, status) VALUES ($1, $2, $3, 'processing')`,
        [ref.tenantId, ref.key, id],
      );
      return { id };
    },
    async load(ref) {
      const rows = await ctx.txHost.tx.query<{ id: string }>(
        `SELECT id FROM ${STATE} WHERE tenant_id = $1 AND key = $2 AND status = 'processing'`,
        [ref.tenantId, ref.key],
      );
      if (!rows[0]) throw new Error('no processing operation');
      return { id: rows[0].id };
    },
    async perform(state, attempt) {
      attempts.push(attempt);
      return (script.perform ?? succeeded)(attempt, state);
    },
    async settle(state, outcome) {
      await script.settle?.();
      await ctx.txHost.tx.query(
        `UPDATE ${STATE} SET status = $2, settlements = settlements + 1 WHERE id = $1`,
        [state.id, outcome],
      );
      return { id: state.id, status: outcome };
    },
    pending: (state) => ({ id: state.id, status: 'processing' }),
  };
}

export function aCall(
  effect: ExternalEffect<State, string, Answer>,
  base = anIdempotentCall(),
): ExternalCall<State, string, Answer> {
  const { tenantId, key, payload } = base.build();
  return { operation: OPERATION, tenantId, key, payload, effect };
}

export function refOf(call: ExternalCall<State, string, Answer>): IdempotencyKeyRef {
  return { tenantId: call.tenantId, operation: OPERATION.operation, key: call.key };
}

export async function recordOf(call: ExternalCall<State, string, Answer>): Promise<
  | {
      state: string;
      attempt: number;
      recovery_point: string | null;
      lease_expires_at: Date | null;
      response_status: number | null;
      response_body: string | null;
    }
  | undefined
> {
  const { rows } = await ctx.db.query(
    `SELECT state, attempt, recovery_point, lease_expires_at, response_status, response_body
       FROM idempotency_records WHERE company_id = $1 AND operation = $2 AND idempotency_key = $3`,
    [call.tenantId, OPERATION.operation, call.key],
  );
  return rows[0];
}

export async function operationsOf(
  call: ExternalCall<State, string, Answer>,
): Promise<Array<{ status: string; settlements: number }>> {
  const { rows } = await ctx.db.query<{ status: string; settlements: number }>(
    `SELECT status, settlements FROM ${STATE} WHERE tenant_id = $1 AND key = $2`,
    [call.tenantId, call.key],
  );
  return rows;
}

/** A latch: `started` resolves once perform runs, which then waits for `release(result)`. */
export function held(): {
  started: Promise<void>;
  perform: () => Promise<EffectResult<string>>;
  release: (result: EffectResult<string>) => void;
} {
  let markStarted!: () => void;
  let release!: (result: EffectResult<string>) => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const released = new Promise<EffectResult<string>>((resolve) => (release = resolve));
  return {
    started,
    perform: () => {
      markStarted();
      return released;
    },
    release,
  };
}
