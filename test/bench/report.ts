import { describeCpu } from './cpu-accounting';
import type { Figures } from './load';

/** One goal of issue 11, evaluated on one run. `pass` is null when a case it needs did not run. */
export interface Goal {
  goal: string;
  /** How the value is computed, in case names. */
  measured: string;
  value: number | null;
  target: string;
  pass: boolean | null;
  note?: string;
}

type Check = (value: number) => boolean;

export function evaluateGoals(results: Figures[], storedKeys: number): Goal[] {
  const by = (name: string): Figures | undefined => results.find((r) => r.name === name && !r.skipped);
  const rate = (a: string, b: string): number | null => {
    const x = by(a);
    const y = by(b);
    return x && y && y.requestsPerSecond > 0 ? x.requestsPerSecond / y.requestsPerSecond : null;
  };
  const latency = (a: string, b: string, field: 'p50Ms' | 'p99Ms'): number | null => {
    const x = by(a);
    const y = by(b);
    return x && y && y[field] > 0 ? x[field] / y[field] : null;
  };
  const extra = (name: string, key: string): number | null => {
    const value = by(name)?.extra?.[key];
    return typeof value === 'number' ? value : null;
  };
  const goal = (
    g: string,
    measured: string,
    value: number | null,
    target: string,
    check: Check | null,
  ): Goal => ({
    goal: g,
    measured,
    value: value === null ? null : Math.round(value * 1000) / 1000,
    target,
    pass: value === null || check === null ? null : check(value),
  });
  const atLeast =
    (x: number): Check =>
    (v) =>
      v >= x;
  const within =
    (x: number): Check =>
    (v) =>
      v >= 1 - x && v <= 1 + x;
  /** All CPU one request of the case took: server, database, Redis, load generator, other. */
  const cpu = (name: string): number | null => {
    const spent = by(name)?.cpuMsPerRequest;
    return spent ? Object.values(spent).reduce((sum, ms) => sum + ms, 0) : null;
  };
  const cpuRatio = (a: string, b: string): number | null => {
    const x = cpu(a);
    const y = cpu(b);
    return x !== null && y !== null && y > 0 ? x / y : null;
  };
  const idle = extra('create', 'idleRssMb');
  const after = extra('create', 'afterRssMb');
  const withIdem = rate('create-no-worker', 'create-no-idempotency');
  const keys = storedKeys.toLocaleString('en-US');
  return [
    goal(
      'create (50 companies) vs the Redis setup',
      'create / redis-create',
      rate('create', 'redis-create'),
      '≥ 1.2×',
      atLeast(1.2),
    ),
    goal(
      'single-series create vs the Redis setup',
      'single / redis-single',
      rate('single', 'redis-single'),
      '≥ 1.2×',
      atLeast(1.2),
    ),
    goal(
      'replay vs the Redis setup',
      'replay / redis-replay',
      rate('replay', 'redis-replay'),
      '≥ 1.2×',
      atLeast(1.2),
    ),
    goal(
      'create vs the pgbench limit (50 companies)',
      'create / pgbench-create',
      rate('create', 'pgbench-create'),
      '≥ 0.35×',
      atLeast(0.35),
    ),
    goal(
      'single-series create vs the pgbench limit (one series)',
      'single / pgbench-single',
      rate('single', 'pgbench-single'),
      '≥ 0.5×',
      atLeast(0.5),
    ),
    goal(
      'idempotency layer cost (1 − with / without, same handler, RUN_WORKER=false, in turns)',
      '1 − create-no-worker / create-no-idempotency',
      withIdem === null ? null : 1 - withIdem,
      '≤ 0.10',
      (v) => v <= 0.1,
    ),
    goal(
      'default start (worker in the process) vs RUN_WORKER=false (in turns)',
      'create-default / create-no-worker',
      rate('create-default', 'create-no-worker'),
      '≥ 0.9×',
      atLeast(0.9),
    ),
    goal(
      'replay vs a bare node:http server',
      'replay / bare-http',
      rate('replay', 'bare-http'),
      '≥ 0.15×',
      atLeast(0.15),
    ),
    goal(
      `replay p50 with ${keys} stored keys vs without them (measured in turns, no replay cache)`,
      'keys-replay p50 / keys-replay-control p50',
      latency('keys-replay', 'keys-replay-control', 'p50Ms'),
      '1 ± 0.10',
      within(0.1),
    ),
    goal(
      `replay p99 with ${keys} stored keys vs without them (measured in turns, no replay cache)`,
      'keys-replay p99 / keys-replay-control p99',
      latency('keys-replay', 'keys-replay-control', 'p99Ms'),
      '1 ± 0.10',
      within(0.1),
    ),
    goal(
      'RSS of the API under the create load (peak, MB)',
      'create peakRssMb',
      extra('create', 'peakRssMb'),
      '< 300',
      (v) => v < 300,
    ),
    goal(
      'RSS after the load vs idle',
      'create afterRssMb / idleRssMb',
      idle && after ? after / idle : null,
      '≤ 1.2×',
      (v) => v <= 1.2,
    ),
    goal(
      'replay without the replay cache vs the Redis setup',
      'replay-uncached / redis-replay',
      rate('replay-uncached', 'redis-replay'),
      'reported',
      null,
    ),
    goal(
      'replay from the replay cache vs from PostgreSQL',
      'replay / replay-uncached',
      rate('replay', 'replay-uncached'),
      'reported',
      null,
    ),
    goal(
      'two API processes vs one (RUN_WORKER=false)',
      'two-processes / create-no-worker',
      rate('two-processes', 'create-no-worker'),
      'reported',
      null,
    ),
    goal(
      'create vs the Node-client baseline (same statements through pg)',
      'create / node-create',
      rate('create', 'node-create'),
      'reported',
      null,
    ),
    goal(
      'CPU of one create: the Redis setup vs ours (all processes, per request)',
      'cpu(redis-create) / cpu(create)',
      cpuRatio('redis-create', 'create'),
      'reported',
      null,
    ),
    goal(
      'create without the idempotency layer (RUN_WORKER=false) vs the Redis setup (in turns)',
      'create-no-idempotency / redis-create-again',
      rate('create-no-idempotency', 'redis-create-again'),
      'reported',
      null,
    ),
    goal(
      'CPU of one create: the Redis setup vs ours without the idempotency layer (in turns)',
      'cpu(redis-create-again) / cpu(create-no-idempotency)',
      cpuRatio('redis-create-again', 'create-no-idempotency'),
      'reported',
      null,
    ),
    goal(
      'create, default start, vs the Redis setup: a second reading (in turns)',
      'create-default / redis-create-again',
      rate('create-default', 'redis-create-again'),
      'reported',
      null,
    ),
    goal(
      'CPU of one round trip (pgbench SELECT 1) vs one create',
      'cpu(pgbench-round-trip) / cpu(create)',
      cpuRatio('pgbench-round-trip', 'create'),
      'reported',
      null,
    ),
    goal(
      'CPU of the smallest durable write (pgbench BEGIN, INSERT, COMMIT) vs one create',
      'cpu(pgbench-write) / cpu(create)',
      cpuRatio('pgbench-write', 'create'),
      'reported',
      null,
    ),
    goal(
      `replay p50 with ${keys} stored keys vs before they were stored (same process, minutes apart)`,
      'keys-replay p50 / keys-replay-before p50',
      latency('keys-replay', 'keys-replay-before', 'p50Ms'),
      'reported',
      null,
    ),
    goal(
      `create with ${keys} stored keys vs create`,
      'keys-create / create',
      rate('keys-create', 'create'),
      'reported',
      null,
    ),
  ];
}

const verdict = (pass: boolean | null): string => (pass === null ? '—' : pass ? 'PASS' : 'MISS');

export function printReport(results: Figures[], goals: Goal[]): void {
  console.log('\n| case | what | req/s | p50 ms | p99 ms | errors | CPU ms per request |');
  console.log('|---|---|---:|---:|---:|---:|---|');
  for (const r of results) {
    if (r.skipped) console.log(`| ${r.name} | ${r.label} | skipped: ${r.skipped} | | | | |`);
    else
      console.log(
        `| ${r.name} | ${r.label} | ${r.requestsPerSecond} | ${r.p50Ms} | ${r.p99Ms} | ${r.errors} | ` +
          `${describeCpu(r.cpuMsPerRequest)} |`,
      );
  }
  const extras = results.filter((r) => r.extra && !r.skipped);
  if (extras.length > 0) {
    console.log('');
    for (const r of extras) {
      console.log(
        `${r.name}: ${Object.entries(r.extra ?? {})
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
      );
    }
  }
  console.log('\n| goal | measured as | value | target | |');
  console.log('|---|---|---:|---|---|');
  for (const g of goals) {
    const value = g.value === null ? 'not run' : String(g.value);
    console.log(`| ${g.goal} | ${g.measured} | ${value} | ${g.target} | ${verdict(g.pass)} |`);
  }
}

const escape = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * Horizontal bars of requests per second on a log scale (the bare node:http ceiling is two
 * orders of magnitude above a create), then the goals with PASS/MISS.
 */
export function chart(results: Figures[], goals: Goal[], subtitle: string): string {
  const measured = results.filter((r) => !r.skipped);
  const width = 900;
  const left = 190;
  const barHeight = 20;
  const plot = width - left - 230;
  const max = Math.max(...measured.map((r) => r.requestsPerSecond), 10);
  const decades = Math.ceil(Math.log10(max));
  const x = (v: number) => left + Math.round((plot * Math.log10(Math.max(v, 1))) / decades);
  const top = 72;
  const grid = Array.from({ length: decades + 1 }, (_, d) => {
    const gx = x(10 ** d);
    const bottom = top + measured.length * (barHeight + 8);
    return (
      `<line x1="${gx}" y1="${top - 6}" x2="${gx}" y2="${bottom}" stroke="#ddd"/>` +
      `<text x="${gx}" y="${top - 10}" font-size="10" text-anchor="middle" fill="#666">${(10 ** d).toLocaleString('en-US')}</text>`
    );
  }).join('\n  ');
  const bars = measured
    .map((r, i) => {
      const y = top + i * (barHeight + 8);
      const colour = r.name.startsWith('redis')
        ? '#c0504d'
        : r.name.startsWith('pgbench') || r.name.startsWith('node')
          ? '#7f7f7f'
          : r.name === 'bare-http'
            ? '#b3b3b3'
            : '#3b6ea5';
      return (
        `<text x="${left - 8}" y="${y + 14}" text-anchor="end" font-size="12">${escape(r.name)}</text>` +
        `<rect x="${left}" y="${y}" width="${x(r.requestsPerSecond) - left}" height="${barHeight}" fill="${colour}"/>` +
        `<text x="${x(r.requestsPerSecond) + 6}" y="${y + 14}" font-size="11">${r.requestsPerSecond} /s · p50 ${r.p50Ms} · p99 ${r.p99Ms} ms</text>`
      );
    })
    .join('\n  ');
  const goalsTop = top + measured.length * (barHeight + 8) + 30;
  const goalLines = goals
    .map((g, i) => {
      const colour = g.pass === null ? '#666' : g.pass ? '#2e7d32' : '#c62828';
      const value = g.value === null ? 'not run' : String(g.value);
      return `<text x="10" y="${goalsTop + 18 + i * 17}" font-size="12" fill="${colour}">${escape(`${verdict(g.pass)}  ${g.goal}: ${value} (target ${g.target})`)}</text>`;
    })
    .join('\n  ');
  const height = goalsTop + 30 + goals.length * 17;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">
  <text x="10" y="20" font-size="14" font-weight="bold">ledgerkey bench: requests (or transactions) per second, log scale</text>
  <text x="10" y="36" font-size="11" fill="#666">${escape(subtitle)}</text>
  <text x="10" y="51" font-size="11" fill="#666">blue: ledgerkey · red: the Redis-plugin setup · dark grey: the database's limit · light grey: bare node:http (cases: docs/performance.md)</text>
  ${grid}
  ${bars}
  <text x="10" y="${goalsTop}" font-size="13" font-weight="bold">Goals of issue 11</text>
  ${goalLines}
</svg>
`;
}
