import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Client } from 'pg';
import {
  ADMIN_TOKEN,
  type Company,
  invoiceBody,
  newCompany,
  postCreate,
  replayKeys,
  replaysOf,
  warmUp,
} from './load';
import { startServer, stop } from './processes';
import { BASELINE_SCHEMA } from './redis-baseline/baseline-schema';
import { deleteKeys, redisCommand, redisVersion } from './redis-probe';
import { BENCH_DIST, emptyDatabase, type Run, skipped } from './bench-run';
import { createCase, inTurns, invoicesOf, type TurnLoad } from './bench-turns';

/** The Redis-plugin setup: the idempotency a NestJS team would reach for, measured beside ours. */

export const REDIS_LABELS = {
  'redis-create': 'Redis setup: create, 50 companies',
  'redis-single': 'Redis setup: create, one company (one number series)',
  'redis-replay': 'Redis setup: replay of a finished key',
  'redis-create-again':
    'Redis setup: create, 50 companies, again (in turns with create-no-worker and create-no-idempotency)',
};

/** The Redis-plugin setup, up, checked and warmed up, with its companies. */
export interface RedisSetup {
  baseUrl: string;
  url: string;
  many: Company[];
  single: Company;
  replay: Company;
  stop(): Promise<void>;
}

/** The Redis-plugin setup, up and checked; undefined (its cases recorded as skipped) without Redis. */
export async function startRedisSetup(run: Run): Promise<RedisSetup | undefined> {
  const { config } = run;
  const redis = await redisVersion(config.redisUrl);
  if ('unavailable' in redis) {
    const reason = `no Redis at ${config.redisUrl} (${redis.unavailable}); start one or set REDIS_URL`;
    console.log(`SKIPPED the Redis setup: ${reason}`);
    for (const [name, label] of Object.entries(REDIS_LABELS)) run.results.push(skipped(name, label, reason));
    return undefined;
  }
  const url = await emptyDatabase(run, 'redis');
  const schema = new Client({ connectionString: url });
  await schema.connect();
  await schema.query(BASELINE_SCHEMA);
  await schema.end();
  const prefix = `ledgerkey-bench-${randomUUID().slice(0, 8)}`;
  const baseline = await startServer(
    'redis-baseline',
    [...config.nodeArgs, join(BENCH_DIST, 'redis-baseline/main.js')],
    {
      DATABASE_URL: url,
      DATABASE_POOL_SIZE: String(config.poolSize),
      ADMIN_API_TOKEN: ADMIN_TOKEN,
      REDIS_URL: config.redisUrl,
      REDIS_KEY_PREFIX: prefix,
    },
    run.dir,
  );
  const stopBaseline = async () => {
    await stop(baseline);
    const deleted = await deleteKeys(config.redisUrl, prefix).catch(() => 0);
    console.log(`  removed ${deleted} bench keys from Redis`);
  };
  try {
    const many = await Promise.all(Array.from({ length: 50 }, (_, i) => newCompany(baseline.baseUrl, i)));
    const single = await newCompany(baseline.baseUrl, 900);
    const replay = await newCompany(baseline.baseUrl, 901);
    await checkRedisReplays(baseline.baseUrl, url, config.redisUrl, prefix, many[0]);
    await warmUp(baseline.baseUrl, many);
    return { baseUrl: baseline.baseUrl, url, many, single, replay, stop: stopBaseline };
  } catch (error) {
    await stopBaseline();
    throw error;
  }
}

/** The Redis setup's create cases, as ours (`again`: the create in turns with ours without the layer). */
export function redisCases(setup: RedisSetup): { create: TurnLoad; single: TurnLoad; again: TurnLoad } {
  const { baseUrl, url, many } = setup;
  return {
    create: createCase('redis-create', REDIS_LABELS['redis-create'], baseUrl, url, many),
    single: createCase('redis-single', REDIS_LABELS['redis-single'], baseUrl, url, [setup.single]),
    again: createCase('redis-create-again', REDIS_LABELS['redis-create-again'], baseUrl, url, many),
  };
}

/** The Redis setup's replay case, over 400 keys it finished first. */
export async function redisReplayCase(setup: RedisSetup): Promise<TurnLoad> {
  const keys = await replayKeys(setup.baseUrl, setup.replay);
  return {
    name: 'redis-replay',
    label: REDIS_LABELS['redis-replay'],
    urls: setup.baseUrl,
    next: replaysOf(keys),
  };
}

/** `BENCH_ONLY` without `ours`: the Redis cases one after the other. */
export async function redisSetupAlone(run: Run, setup: RedisSetup): Promise<void> {
  const { create, single } = redisCases(setup);
  run.results.push(...(await inTurns(run, create)), ...(await inTurns(run, single)));
  run.results.push(...(await inTurns(run, await redisReplayCase(setup))));
}

/**
 * Before measuring: the baseline really is idempotent through Redis. A second request with the
 * same key answers the stored invoice (`Idempotent-Replayed: true`, same id), the key is in
 * Redis, and PostgreSQL holds one invoice, not two.
 */
export async function checkRedisReplays(
  baseUrl: string,
  url: string,
  redisUrl: string,
  prefix: string,
  company: Company,
): Promise<void> {
  const key = `check-${randomUUID()}`;
  const first = await postCreate(baseUrl, company, key, invoiceBody(1));
  const firstBody = (await first.json()) as { id: string };
  const second = await postCreate(baseUrl, company, key, invoiceBody(1));
  const secondBody = (await second.json()) as { id: string };
  const stored = await redisCommand(redisUrl, ['EXISTS', `${prefix}:POST:/v1/sales/invoices/create:${key}`]);
  const invoices = await invoicesOf({ url, companies: [company] });
  const problems = [
    first.status !== 201 && `first create answered ${first.status}`,
    second.status !== 201 && `replay answered ${second.status}`,
    second.headers.get('idempotent-replayed') !== 'true' && 'replay lacks Idempotent-Replayed: true',
    secondBody.id !== firstBody.id && 'replay answered another invoice',
    stored !== 1 && 'the key is not in Redis',
    invoices !== 1 && `${invoices} invoices in PostgreSQL after a create and its replay`,
  ].filter(Boolean);
  if (problems.length > 0) throw new Error(`the Redis baseline is not idempotent: ${problems.join('; ')}`);
  console.log('  Redis baseline check: the replay came from Redis, one invoice in PostgreSQL');
}
