import { cpus } from 'node:os';
import { Client } from 'pg';
import {
  type Company,
  createLoad,
  createsOver,
  interleavedLoads,
  newCompany,
  replayKeys,
  replaysOf,
  warmUp,
} from './load';
import { type Server, startApi, stop } from './processes';
import { drainJobs, migratedDatabase, REPLAY_CACHE_OFF, type Run, warmUpReplays } from './bench-run';
import { TURNS } from './bench-turns';

/** Many stored keys: replays and creates with millions of idempotency records in the table. */

export async function manyKeys(run: Run): Promise<void> {
  const { config } = run;
  const url = await migratedDatabase(run, 'keys');
  const controlUrl = await migratedDatabase(run, 'keysctl');
  const label = config.storedKeys.toLocaleString('en-US');
  // Without the replay cache, like `replay-uncached`: the goal is about the stored keys' index.
  // Two processes, each on a database of its own with the same companies and replay keys: the
  // keys are stored in one, and the two are then measured in turns (A B, B A …), so that what the
  // machine does after writing gigabytes — writeback, its memory daemons — weighs on both alike.
  // The first is also measured before the keys are stored (`keys-replay-before`), for the record.
  const uncached = await startApi(url, REPLAY_CACHE_OFF, run.dir, config);
  const control = await startApi(controlUrl, REPLAY_CACHE_OFF, run.dir, config);
  let many: Company[];
  try {
    const prepare = async (api: Server) => {
      const companiesOf = await Promise.all(Array.from({ length: 50 }, (_, i) => newCompany(api.baseUrl, i)));
      const replay = await newCompany(api.baseUrl, 901);
      await warmUp(api.baseUrl, companiesOf);
      return { many: companiesOf, replay, keys: await replayKeys(api.baseUrl, replay) };
    };
    const big = await prepare(uncached);
    const small = await prepare(control);
    many = big.many;
    // The same warm-up as `replay-uncached`: one pass over the keys.
    await warmUpReplays(uncached.baseUrl, big.keys);
    await drainJobs(url);
    run.results.push(
      await createLoad(
        'keys-replay-before',
        'replay before the keys are stored, IDEMPOTENCY_REPLAY_CACHE_SIZE=0',
        uncached.baseUrl,
        config,
        replaysOf(big.keys),
      ),
    );
    // The control's process gets the same load before the seeding (its JIT as warm as the other's).
    await warmUpReplays(control.baseUrl, small.keys);
    await createLoad(
      'keys-replay-control-warm-up',
      'the control process under the same load before the seeding (not a case)',
      control.baseUrl,
      config,
      replaysOf(small.keys),
    );
    const seed = await seedKeys(
      url,
      [...big.many, big.replay].map((c) => c.companyId),
      config.storedKeys,
    );
    // The control's table gets what the seeding gives the other one (VACUUM, ANALYZE): the same
    // statistics-based plans on both sides.
    await vacuumRecords(controlUrl);
    await warmUpReplays(uncached.baseUrl, big.keys);
    await warmUpReplays(control.baseUrl, small.keys);
    await drainJobs(url);
    await drainJobs(controlUrl);
    const [controlFigures, replayFigures] = await interleavedLoads(
      [
        {
          name: 'keys-replay-control',
          label: `replay on a database without the stored keys, in turns with keys-replay (${TURNS} rounds), IDEMPOTENCY_REPLAY_CACHE_SIZE=0`,
          urls: control.baseUrl,
          next: replaysOf(small.keys),
        },
        {
          name: 'keys-replay',
          label: `replay, ${label} keys stored, in turns with keys-replay-control, IDEMPOTENCY_REPLAY_CACHE_SIZE=0`,
          urls: uncached.baseUrl,
          next: replaysOf(big.keys),
        },
      ],
      config,
      TURNS,
    );
    replayFigures.extra = seed;
    run.results.push(controlFigures, replayFigures);
  } finally {
    await stop(uncached);
    await stop(control);
  }
  // keys-create on a default start, like `create`.
  const api = await startApi(url, {}, run.dir, config);
  try {
    await warmUp(api.baseUrl, many);
    await drainJobs(url);
    run.results.push(
      await createLoad(
        'keys-create',
        `create, 50 companies, ${label} keys stored`,
        api.baseUrl,
        config,
        createsOver('keys', many),
      ),
    );
  } finally {
    await stop(api);
  }
}

export async function vacuumRecords(url: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('VACUUM (ANALYZE) idempotency_records');
  } finally {
    await client.end();
  }
}

/**
 * Loads `count` finished keys (expiring in a day) spread over the companies: random UUIDs, as
 * clients send them, so the primary key is as random inserts leave it. One INSERT … SELECT
 * generate_series per core, in parallel. Foreign-key triggers are skipped for the load where
 * the role may (session_replication_role; every company id is real). Then VACUUM (ANALYZE) and a
 * CHECKPOINT, so that neither runs during the measurement.
 */
export async function seedKeys(
  url: string,
  companyIds: string[],
  count: number,
): Promise<Record<string, number | string>> {
  const t0 = Date.now();
  const parts = Math.max(1, Math.min(cpus().length, 4));
  const triggers = await Promise.all(
    Array.from({ length: parts }, async (_, part) => {
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        let fkTriggers = 'on';
        try {
          await client.query(`SET session_replication_role = replica`);
          fkTriggers = 'skipped';
        } catch {
          // not a superuser: load with the foreign-key checks
        }
        await client.query(
          `INSERT INTO idempotency_records (company_id, operation, idempotency_key, fingerprint, response_status,
                                            response_headers, response_body, expires_at)
           SELECT ($1::uuid[])[1 + g % cardinality($1::uuid[])], 'sales.invoices.create',
                  md5('seeded ' || g)::uuid::text, sha256(g::text::bytea), 201, '{}', '{"seeded":true}',
                  now() + interval '1 day'
             FROM generate_series($2::bigint, $3::bigint) AS g`,
          [companyIds, Math.floor((count * part) / parts) + 1, Math.floor((count * (part + 1)) / parts)],
        );
        return fkTriggers;
      } finally {
        await client.end();
      }
    }),
  );
  const inserted = Math.round((Date.now() - t0) / 100) / 10;
  // VACUUM as well: an insert-only table of this size otherwise gets its first autovacuum (and
  // every tuple its hint bits) during the measurement.
  await vacuumRecords(url);
  const client = new Client({ connectionString: url });
  await client.connect();
  await client.query('CHECKPOINT').catch(() => undefined);
  const total = Math.round((Date.now() - t0) / 100) / 10;
  const { rows } = await client.query<{ size: string }>(
    `SELECT pg_size_pretty(pg_total_relation_size('idempotency_records')) AS size`,
  );
  await client.end();
  console.log(
    `seeded ${count} keys in ${inserted} s (${parts} in parallel; with VACUUM, ANALYZE and CHECKPOINT ${total} s), table ${rows[0].size}`,
  );
  return {
    storedKeys: count,
    seedSeconds: inserted,
    seedTotalSeconds: total,
    seedParallel: parts,
    tableSize: rows[0].size,
    foreignKeyTriggers: triggers[0],
  };
}
