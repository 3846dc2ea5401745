import type { RunningProviderSandbox } from '@ledgerkey/payments';
import type { ApiProcess } from './api-process';
import { KINDS, type LogicalOperation } from './chaos-load';
import type { ProcessKiller } from './chaos-processes';
import type { ChaosTimeline, InjectedFault, RecordedAttempt } from './chaos-timeline';
import type { WebhookReceiver } from './webhook-receiver';
import type { WorkerProcess } from './worker-process';

/** What a chaos run found, for its summary. */
export interface ChaosReport {
  operations: LogicalOperation[];
  faults: InjectedFault[];
  eventCount: number;
  received: Map<string, number>;
  deliveryStatuses: Record<string, number>;
  fiveHundreds: { inside: RecordedAttempt[]; outside: RecordedAttempt[] };
  webhooksMissing: boolean;
  processingLeft: string[];
  durations: { total: number; load: number; drain: number };
}

/** The processes of a chaos run as they are at its end, and what was done to them. */
export interface ChaosRun {
  timeline: ChaosTimeline;
  /** What was killed and restarted: counts and the killed processes' output. */
  killer: ProcessKiller;
  apis: ApiProcess[];
  worker: WorkerProcess;
  sandbox: RunningProviderSandbox;
  receiver: WebhookReceiver;
  providerFaults: string;
  sandboxSeed: number;
}

/** Prints the run's tables; with the processes' output when anything went wrong. */
export function printChaosSummary(report: ChaosReport, run: ChaosRun): void {
  const { timeline, apis, worker, sandbox, receiver, providerFaults, sandboxSeed } = run;
  const { restarts, deadOutput } = run.killer;
  const { operations, faults, received, fiveHundreds } = report;
  const t0 = Math.min(...timeline.attempts.map((attempt) => attempt.startedAt));
  const seconds = (ms: number): string => (ms / 1000).toFixed(1);
  const rows: string[][] = [['kind', 'ops', 'dual', 'created', 'failed', 'calls', 'attempts', 'replayed']];
  for (const kind of [...KINDS, 'all'] as const) {
    const mine = operations.filter((op) => kind === 'all' || op.kind === kind);
    const calls = mine.flatMap((op) => op.calls);
    rows.push([
      kind,
      String(mine.length),
      String(mine.filter((op) => op.dual).length),
      String(mine.filter((op) => op.calls.every((c) => c.status === 201)).length),
      String(mine.filter((op) => op.calls.some((c) => c.error !== undefined)).length),
      String(calls.length),
      String(calls.reduce((sum, c) => sum + c.attempts, 0)),
      String(calls.filter((c) => c.replayed).length),
    ]);
  }
  const attempts = timeline.attempts;
  const count = (predicate: (attempt: RecordedAttempt) => boolean): number =>
    attempts.filter(predicate).length;
  const duplicates = [...received.values()].filter((n) => n > 1).length;
  const pairs = operations.filter((op) => op.dual);
  const lines = [
    '',
    '=== ledgerkey chaos summary ===',
    table(rows),
    '',
    table([
      ['attempts', 'total', '2xx', 'replayed', '409 in_use', '5xx in window', '5xx outside', 'no answer'],
      [
        'http',
        String(attempts.length),
        String(count((a) => a.status !== undefined && a.status < 300)),
        String(count((a) => a.replayed)),
        String(count((a) => a.code === 'idempotency_key_in_use')),
        String(fiveHundreds.inside.length),
        String(fiveHundreds.outside.length),
        String(count((a) => a.error !== undefined)),
      ],
    ]),
    '',
    table([
      ['fault', 'target', 'at (s)', 'recovered (s)', 'took (s)'],
      ...faults.map((fault) => [
        fault.kind,
        fault.target,
        seconds(fault.startedAt - t0),
        fault.recoveredAt === undefined ? '-' : seconds(fault.recoveredAt - t0),
        fault.recoveredAt === undefined ? '-' : seconds(fault.recoveredAt - fault.startedAt),
      ]),
    ]),
    `shared-key pairs: ${pairs.length}; one executed and one replayed: ${
      pairs.filter((op) => op.calls.filter((c) => c.replayed).length === 1).length
    }; both replayed (the executing answer was lost to a fault): ${
      pairs.filter((op) => op.calls.every((c) => c.replayed)).length
    }`,
    `kills: api ${faults.filter((f) => f.kind === 'api_kill').length}, worker ${faults.filter((f) => f.kind === 'worker_kill').length}, ` +
      `sandbox ${faults.filter((f) => f.kind === 'sandbox_kill').length}; ` +
      `restarts: api ${restarts.api}, worker ${restarts.worker}, sandbox ${restarts.sandbox}, postgres ${faults.filter((f) => f.kind === 'postgres_restart').length}`,
    `5xx codes: ${JSON.stringify(tally([...fiveHundreds.inside, ...fiveHundreds.outside].map((a) => `${a.status} ${a.code ?? '?'}`)))}`,
    `payments: ${JSON.stringify(tally(operations.filter((op) => op.kind === 'payment').map((op) => `${String(op.body.paymentMethod)} → ${op.calls[0]?.paymentStatus ?? 'error'}`)))}; ` +
      `202 answers: ${count((a) => a.status === 202)}; provider faults ${providerFaults} (seed ${sandboxSeed}, CHAOS_SANDBOX_SEED)`,
    `events: ${report.eventCount}; received ${received.size} distinct in ${receiver.requests.length} requests; ` +
      `${duplicates} received more than once; deliveries ${JSON.stringify(report.deliveryStatuses)}`,
    `duration: total ${seconds(report.durations.total)} s, load ${seconds(report.durations.load)} s, ` +
      `webhook drain ${seconds(report.durations.drain)} s`,
  ];
  const failedCalls = operations.flatMap((op) => op.calls.filter((c) => c.error !== undefined));
  if (
    fiveHundreds.outside.length > 0 ||
    fiveHundreds.inside.some((attempt) => attempt.code !== 'service_unavailable') ||
    failedCalls.length > 0 ||
    report.webhooksMissing ||
    report.processingLeft.length > 0 ||
    !worker.running
  ) {
    lines.push('5xx outside fault windows:', ...fiveHundreds.outside.map((a) => JSON.stringify(a)));
    lines.push('failed calls:', ...failedCalls.map((c) => JSON.stringify(c)));
    lines.push(
      ...apis.map((api, slot) => `--- api${slot} (pid ${api.pid}) ---\n${api.output()}`),
      `--- worker (pid ${worker.pid}) ---\n${worker.output()}`,
      `--- sandbox (pid ${sandbox.pid}) ---\n${sandbox.output()}`,
      `payments still processing: ${report.processingLeft.join(', ')}`,
      ...deadOutput,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

export function tally(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

export function table(rows: string[][]): string {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])))
        .join('  '),
    )
    .join('\n');
}
