import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { cpuPerRequest, cpuTimes, describeCpu, type CpuTimes } from './cpu-accounting';

export const CREATE = '/v1/sales/invoices/create';
export const ADMIN_TOKEN = 'bench-admin-token-0123456789';

/** One measured case. Latencies are of 2xx answers, from the client's side, in ms. */
export interface Figures {
  name: string;
  label: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Non-2xx answers, connection errors and timeouts (pgbench: failed transactions). */
  errors: number;
  completed: number;
  seconds: number;
  /** Why a case was not run, when it was not. */
  skipped?: string;
  /** Figures a case adds: RSS samples, seeding time, worker backlog… */
  extra?: Record<string, number | string>;
  /**
   * CPU ms (user + system) per completed request during the case, by who spent it: `server` (the
   * node process(es) under test), `postgres`, `redis`, `client` (the load generator), `other`.
   */
  cpuMsPerRequest?: Record<string, number>;
}

/** A company as the admin endpoint returns it (ledgerkey and the Redis baseline alike). */
export interface Company {
  companyId: string;
  apiKey: string;
}

/** The same two-line body (21 % and 9 % VAT) for every create; the price varies a little. */
export const invoiceBody = (n: number): string =>
  JSON.stringify({
    customer: { name: 'UAB Bench', countryCode: 'LT', vatId: 'LT100001234567' },
    lines: [
      { description: 'Consulting', quantity: '2', unitPrice: 5000 + (n % 100), vatRate: '21' },
      { description: 'Book', quantity: '1', unitPrice: 1500, vatRate: '9' },
    ],
  });

export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** Rounds a latency to 0.1 ms: fine enough to compare p50s of a few ms within ±10 %. */
export const ms = (value: number): number => Math.round(value * 10) / 10;

export function figuresFromLatencies(
  name: string,
  label: string,
  latencies: number[],
  seconds: number,
  errors: number,
): Figures {
  const sorted = Float64Array.from(latencies).sort();
  return {
    name,
    label,
    requestsPerSecond: Math.round(sorted.length / seconds),
    p50Ms: ms(percentile(sorted, 0.5)),
    p99Ms: ms(percentile(sorted, 0.99)),
    errors,
    completed: sorted.length,
    seconds: Math.round(seconds * 100) / 100,
  };
}

export interface KeyedRequest {
  apiKey: string;
  key: string;
  body: string;
}

/** What one autocannon run measured, before it is turned into `Figures`. */
interface Measured {
  latencies: number[];
  errors: number;
  seconds: number;
  cpuBefore: CpuTimes;
  cpuAfter: CpuTimes;
}

/**
 * Drives POST /v1/sales/invoices/create with autocannon. `next` names each request's company,
 * key and body. Several URLs split the connections between them (client-side round robin).
 * Latencies are recorded per response (autocannon's own histogram has 1 ms resolution).
 */
export async function createLoad(
  name: string,
  label: string,
  urls: string | string[],
  config: { connections: number; seconds: number },
  next: (n: number) => KeyedRequest,
): Promise<Figures> {
  return figuresOf(name, label, [await measure(urls, config, next)]);
}

/** One load that `interleavedLoads` runs in turns with others. */
export interface InterleavedLoad {
  name: string;
  label: string;
  urls: string | string[];
  next: (n: number) => KeyedRequest;
}

/**
 * Runs several loads in turns — `rounds` slices of `seconds / rounds` each, A B, B A, A B … (the
 * order reversed every other round, so neither always follows the other) — and figures each over
 * all its slices: the loads share whatever the machine does meanwhile, so their ratio is about
 * them, not about the minutes between them.
 */
export async function interleavedLoads(
  loads: InterleavedLoad[],
  { connections, seconds }: { connections: number; seconds: number },
  rounds: number,
): Promise<Figures[]> {
  const slices = loads.map((): Measured[] => []);
  const slice = { connections, seconds: Math.max(1, Math.round(seconds / rounds)) };
  // Each load numbers its requests across its slices: a create's key is never sent twice.
  const sent = loads.map(() => 0);
  const nextOf = (index: number) => () => loads[index].next((sent[index] += 1));
  for (let round = 0; round < rounds; round++) {
    const order = loads.map((_, index) => index);
    if (round % 2 === 1) order.reverse();
    for (const index of order) slices[index].push(await measure(loads[index].urls, slice, nextOf(index)));
  }
  return loads.map((load, index) => figuresOf(load.name, load.label, slices[index]));
}

/** Figures over one or more measured slices, printed as a case line. */
function figuresOf(name: string, label: string, slices: Measured[]): Figures {
  const figures = figuresFromLatencies(
    name,
    label,
    slices.flatMap((slice) => slice.latencies),
    slices.reduce((sum, slice) => sum + slice.seconds, 0),
    slices.reduce((sum, slice) => sum + slice.errors, 0),
  );
  const spent = (which: 'cpuBefore' | 'cpuAfter') => {
    const total: CpuTimes = { server: 0, postgres: 0, redis: 0, client: 0, other: 0 };
    for (const slice of slices) {
      for (const group of Object.keys(total) as Array<keyof CpuTimes>) total[group] += slice[which][group];
    }
    return total;
  };
  figures.cpuMsPerRequest = cpuPerRequest(spent('cpuBefore'), spent('cpuAfter'), figures.completed);
  const cpu = describeCpu(figures.cpuMsPerRequest);
  console.log(
    `(${name}) ${label}: ${figures.requestsPerSecond} req/s, p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms` +
      (figures.errors ? `, ${figures.errors} errors` : '') +
      (cpu ? `; CPU ms per request: ${cpu}` : ''),
  );
  return figures;
}

function measure(
  urls: string | string[],
  { connections, seconds }: { connections: number; seconds: number },
  next: (n: number) => KeyedRequest,
): Promise<Measured> {
  let n = 0;
  const latencies: number[] = [];
  const cpuBefore = cpuTimes();
  return new Promise((resolveMeasured, reject) => {
    const instance = autocannon(
      {
        // autocannon accepts several URLs at run time; its type says one.
        url: urls as string,
        connections,
        duration: seconds,
        requests: [
          {
            method: 'POST',
            path: CREATE,
            setupRequest: (request) => {
              n += 1;
              const { apiKey, key, body } = next(n);
              request.headers = {
                authorization: `Bearer ${apiKey}`,
                'content-type': 'application/json',
                'idempotency-key': key,
              };
              request.body = body;
              return request;
            },
          },
        ],
      },
      (error: unknown, result: autocannon.Result) => {
        if (error) return reject(error instanceof Error ? error : new Error(String(error)));
        resolveMeasured({
          latencies,
          errors: result.errors + result.non2xx + result.timeouts,
          seconds: result.duration,
          cpuBefore,
          cpuAfter: cpuTimes(),
        });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
}

/** Creates spread round-robin over companies, each with a key of its own. */
export function createsOver(name: string, companies: Company[]): (n: number) => KeyedRequest {
  const run = randomUUID().slice(0, 8);
  return (n) => ({
    apiKey: companies[n % companies.length].apiKey,
    key: `bench-${name}-${run}-${n}`,
    body: invoiceBody(n),
  });
}

export async function newCompany(baseUrl: string, n: number): Promise<Company> {
  const response = await fetch(`${baseUrl}/admin/companies`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${ADMIN_TOKEN}`,
      'Content-Type': 'application/json',
      'Idempotency-Key': `bench-company-${randomUUID()}`,
    },
    body: JSON.stringify({ name: `Bench ${n}`, countryCode: 'LT', currency: 'EUR' }),
  });
  if (response.status !== 201) throw new Error(`company: ${response.status} ${await response.text()}`);
  return (await response.json()) as Company;
}

export async function postCreate(
  baseUrl: string,
  company: Company,
  key: string,
  body: string,
): Promise<Response> {
  return fetch(`${baseUrl}${CREATE}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${company.apiKey}`,
      'content-type': 'application/json',
      'idempotency-key': key,
    },
    body,
  });
}

export async function warmUp(baseUrl: string, companies: Company[], count = 200): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const response = await postCreate(
      baseUrl,
      companies[i % companies.length],
      `warm-${randomUUID()}`,
      invoiceBody(i),
    );
    await response.arrayBuffer();
    if (response.status !== 201) throw new Error(`warm-up create: ${response.status}`);
  }
}

/**
 * Replays: `count` keys created first, then requested round-robin. A finished key is read
 * without a lock, so concurrent requests on one key all replay.
 */
export async function replayKeys(baseUrl: string, company: Company, count = 400): Promise<KeyedRequest[]> {
  const keys: KeyedRequest[] = [];
  for (let i = 0; i < count; i += 1) {
    const key = `bench-replay-${randomUUID()}`;
    const body = invoiceBody(i);
    const response = await postCreate(baseUrl, company, key, body);
    await response.arrayBuffer();
    if (response.status !== 201) throw new Error(`replay setup: ${response.status}`);
    keys.push({ apiKey: company.apiKey, key, body });
  }
  return keys;
}

export const replaysOf =
  (keys: KeyedRequest[]): ((n: number) => KeyedRequest) =>
  (n) =>
    keys[n % keys.length];
