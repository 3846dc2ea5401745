import { Injectable } from '@nestjs/common';
import {
  IDEMPOTENCY_OUTCOMES,
  type IdempotencyObserver,
  type IdempotencyOutcome,
} from '@ledgerkey/idempotency';
import { Counter, Registry } from 'prom-client';

/** The idempotency layer's observer, as Prometheus counters. */
@Injectable()
export class IdempotencyMetrics implements IdempotencyObserver {
  private readonly requests: Counter<'operation' | 'outcome'>;
  private readonly purgedRecords: Counter;
  private readonly operationsSeen = new Set<string>();

  constructor(registry: Registry) {
    this.requests = new Counter({
      name: 'ledgerkey_idempotency_requests_total',
      help: 'Requests to idempotent operations, by operation and idempotency outcome.',
      labelNames: ['operation', 'outcome'],
      registers: [registry],
    });
    this.purgedRecords = new Counter({
      name: 'ledgerkey_idempotency_records_purged_total',
      help: 'Expired idempotency records deleted by purge runs in this process.',
      registers: [registry],
    });
  }

  observe(operation: string, outcome: IdempotencyOutcome): void {
    if (!this.operationsSeen.has(operation)) {
      this.operationsSeen.add(operation);
      // Every outcome of an operation exists from its first request on, at 0: increase() and
      // rate() cannot see the first increment of a series that appears with value 1.
      for (const each of IDEMPOTENCY_OUTCOMES) this.requests.inc({ operation, outcome: each }, 0);
    }
    this.requests.inc({ operation, outcome });
  }

  purged(count: number): void {
    this.purgedRecords.inc(count);
  }
}
