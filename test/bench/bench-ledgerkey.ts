import { setTimeout as sleep } from 'node:timers/promises';
import type { Group } from './bench-config';
import { type KeyedRequest, createLoad, createsOver, replayKeys, replaysOf, warmUp } from './load';
import { type Server, rssMb, sampleRss, startApi, stop } from './processes';
import { companies, drainJobs, REPLAY_CACHE_OFF, replayAnswer, type Run, warmUpReplays } from './bench-run';
import { createCase, inTurns } from './bench-turns';
import { redisCases, redisReplayCase, type RedisSetup } from './bench-redis';

/** The ledgerkey cases: the default start, and the same create without the worker or the idempotency layer. */

/**
 * Default start (the worker runs in the API process): create, single series, replay (answered
 * from the replay cache), memory; then the same replays on a second process without the cache.
 */
export async function ledgerkeyDefaultStart(
  run: Run,
  url: string,
  versus: RedisSetup | undefined,
): Promise<void> {
  const { config } = run;
  const api = await startApi(url, {}, run.dir, config);
  let keys: KeyedRequest[];
  try {
    const { many, single, replay } = await companies(run, api);
    await warmUp(api.baseUrl, many);
    await drainJobs(url);
    // Idle as after the load: the same quiet time (the idle collection runs in both).
    await sleep(config.settleSeconds * 1000);
    const idleRssMb = rssMb(api.child.pid as number);
    const sampler = sampleRss(api.child.pid as number);
    const [create, redisCreate] = await inTurns(
      run,
      createCase(
        'create',
        'create, 50 companies (default start: worker in the process)',
        api.baseUrl,
        url,
        many,
      ),
      versus && redisCases(versus).create,
    );
    const underLoad = sampler.stop();
    const backlog = await drainJobs(url);
    await sleep(config.settleSeconds * 1000);
    create.extra = {
      idleRssMb,
      peakRssMb: Math.max(...underLoad),
      meanRssMb: Math.round(underLoad.reduce((a, b) => a + b, 0) / Math.max(underLoad.length, 1)),
      afterRssMb: rssMb(api.child.pid as number),
      settleSeconds: config.settleSeconds,
      jobBacklogAfterLoad: backlog.jobs,
      jobDrainSeconds: backlog.seconds,
    };
    console.log(`  memory: ${JSON.stringify(create.extra)}`);
    run.results.push(create, ...(redisCreate ? [redisCreate] : []));

    const [singleFigures, redisSingle] = await inTurns(
      run,
      createCase('single', 'create, one company (one number series)', api.baseUrl, url, [single]),
      versus && redisCases(versus).single,
    );
    const singleBacklog = await drainJobs(url);
    singleFigures.extra = { jobBacklogAfterLoad: singleBacklog.jobs, jobDrainSeconds: singleBacklog.seconds };
    run.results.push(singleFigures, ...(redisSingle ? [redisSingle] : []));

    // Created by this process: their answers are in its replay cache from the first request on.
    keys = await replayKeys(api.baseUrl, replay);
    run.replayAnswer = await replayAnswer(api.baseUrl, replay, keys[0].key, keys[0].body);
    await drainJobs(url);
    run.results.push(
      ...(await inTurns(
        run,
        {
          name: 'replay',
          label: 'replay of a finished key (from the replay cache)',
          urls: api.baseUrl,
          next: replaysOf(keys),
        },
        versus && (await redisReplayCase(versus)),
      )),
    );
  } finally {
    await stop(api);
  }

  const uncached = await startApi(url, REPLAY_CACHE_OFF, run.dir, config);
  try {
    const { many } = await companies(run, uncached);
    await warmUp(uncached.baseUrl, many);
    await warmUpReplays(uncached.baseUrl, keys);
    await drainJobs(url);
    run.results.push(
      await createLoad(
        'replay-uncached',
        'replay of a finished key, IDEMPOTENCY_REPLAY_CACHE_SIZE=0 (one PostgreSQL read)',
        uncached.baseUrl,
        config,
        replaysOf(keys),
      ),
    );
  } finally {
    await stop(uncached);
  }
}

/**
 * The same create three ways, in turns (each process up, one loaded at a time): default start
 * again (`create-default`), RUN_WORKER=false, and RUN_WORKER=false without the idempotency layer;
 * then two processes. The worker and layer goals compare cases of these turns, not cases measured
 * minutes apart. With the layer's variant, the Redis setup's create runs in the same turns
 * (`redis-create-again`): how ours compares with it when ours stores no key at all, the ceiling
 * of what the idempotency layer could give the create goal.
 */
export async function ledgerkeyWithoutWorker(
  run: Run,
  url: string,
  versus: RedisSetup | undefined,
): Promise<void> {
  const { config } = run;
  const on = (group: Group) => config.groups.has(group);
  // `group`: the one that asks for the variant; `create-no-worker` runs whenever this function does.
  const all: Array<{ name: string; label: string; env: Record<string, string>; group?: Group }> = [
    {
      name: 'create-default',
      label: 'create, 50 companies, default start (in turns with the two below)',
      env: {},
      group: 'worker',
    },
    {
      name: 'create-no-worker',
      label: 'create, 50 companies, RUN_WORKER=false',
      env: { RUN_WORKER: 'false' },
    },
    {
      name: 'create-no-idempotency',
      label: 'create, 50 companies, RUN_WORKER=false, BENCHMARK_DISABLE_IDEMPOTENCY=true',
      // The switch turns the contract off, so the API refuses it unless NODE_ENV=test (which
      // changes nothing else the API does).
      env: { RUN_WORKER: 'false', BENCHMARK_DISABLE_IDEMPOTENCY: 'true', NODE_ENV: 'test' },
      group: 'idempotency',
    },
  ];
  const variants = all.filter((variant) => variant.group === undefined || on(variant.group));
  const apis: Server[] = [];
  try {
    for (const variant of variants) apis.push(await startApi(url, variant.env, run.dir, config));
    const { many } = await companies(run, apis[0]);
    for (const api of apis) await warmUp(api.baseUrl, many);
    await drainJobs(url);
    const loads = variants.map((variant, index) =>
      createCase(variant.name, variant.label, apis[index].baseUrl, url, many),
    );
    if (versus && on('idempotency')) loads.push(redisCases(versus).again);
    run.results.push(...(await inTurns(run, loads[0], ...loads.slice(1))));
  } finally {
    for (const api of apis) await stop(api);
  }
  const { many } = run.companies as NonNullable<Run['companies']>;

  if (on('scale')) {
    const two = [
      await startApi(url, { RUN_WORKER: 'false' }, run.dir, config),
      await startApi(url, { RUN_WORKER: 'false' }, run.dir, config),
    ];
    try {
      for (const api2 of two) await warmUp(api2.baseUrl, many);
      run.results.push(
        await createLoad(
          'two-processes',
          'create, 50 companies, two API processes (connections split between them), RUN_WORKER=false',
          two.map((s) => s.baseUrl),
          config,
          createsOver('two', many),
        ),
      );
    } finally {
      for (const api2 of two) await stop(api2);
    }
  }
}
