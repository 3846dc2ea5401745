import type { ResumeResult, StalledOperation } from './external-effect';
import type { TransactionRunner } from './idempotency-ports';
import {
  type ExternalCall,
  type IdempotentAnswer,
  type IdempotentCall,
  IdempotentExecutor,
  pendingAnswer,
  refOf,
  successResponse,
} from './idempotent-executor';

/**
 * Benchmark only (BENCHMARK_DISABLE_IDEMPOTENCY): the same operation in a plain transaction,
 * with no claim, lock or stored record, so `npm run bench` can measure what the protocol costs.
 * Never wired in a deployment: the variable is refused at boot unless NODE_ENV=test.
 */
export class UnkeyedExecutor extends IdempotentExecutor {
  constructor(private readonly transactions: TransactionRunner) {
    super();
  }

  findReplay(): Promise<IdempotentAnswer | null> {
    return Promise.resolve(null);
  }

  findStoredReplay(): Promise<IdempotentAnswer | null> {
    return Promise.resolve(null);
  }

  async execute<TResult>(call: IdempotentCall<TResult>): Promise<IdempotentAnswer> {
    const result = await this.transactions.run(call.execute);
    return { ...successResponse(call.operation, result), outcome: 'executed' };
  }

  async executeExternal<TState, TOutcome, TResult>(
    call: ExternalCall<TState, TOutcome, TResult>,
  ): Promise<IdempotentAnswer> {
    const { effect } = call;
    const ref = refOf(call);
    const state = await this.transactions.run(() => effect.prepare(ref));
    const result = await effect.perform(state, { attempt: 1, resumed: false });
    if (!result.known) return pendingAnswer(call.operation, effect.pending(state), effect.retryAfterSeconds);
    const settled = await this.transactions.run(() => effect.settle(state, result.outcome));
    return { ...successResponse(call.operation, settled), outcome: 'executed' };
  }

  resume<TResult>(): Promise<ResumeResult<TResult>> {
    return Promise.resolve({ result: 'skipped' });
  }

  stalledOperations(): Promise<StalledOperation[]> {
    return Promise.resolve([]);
  }
}
