import { Client } from 'pg';
import {
  type Company,
  type Figures,
  type InterleavedLoad,
  createLoad,
  createsOver,
  interleavedLoads,
} from './load';
import type { Run } from './bench-run';

/** Cases measured in turns: each process up, one loaded at a time (TURNS rounds). */

/**
 * Cases compared in turns (a ledgerkey case and its Redis-setup case; `keys-replay` and its
 * control) each get `BENCH_SECONDS` in this many slices, A B, B A …, so their ratio is about them
 * and not about what the machine did in the minutes between them.
 */
export const TURNS = 4;

/** A case's load and, for creates, where its invoices go (`database`: checked after the case). */
export type TurnLoad = InterleavedLoad & { database?: { url: string; companies: Company[] } };

/** Creates over `companies` of the setup at `baseUrl`, whose invoices go to database `url`. */
export function createCase(
  name: string,
  label: string,
  baseUrl: string,
  url: string,
  companies: Company[],
): TurnLoad {
  return { name, label, urls: baseUrl, next: createsOver(name, companies), database: { url, companies } };
}

/**
 * A case alone, or in turns with others (its Redis-setup case, when that setup is up; the three
 * ways of starting ledgerkey). A create case must have stored one invoice per 2xx answer (cases on
 * one database together): a replay counted as a create fails the run.
 */
export async function inTurns(
  run: Run,
  first: TurnLoad,
  ...others: Array<TurnLoad | undefined>
): Promise<Figures[]> {
  const loads = [first, ...others.filter((load): load is TurnLoad => load !== undefined)];
  // Loads on one database are checked together: their creates add up.
  const databases = new Map<string, NonNullable<TurnLoad['database']>>();
  for (const { database } of loads) {
    if (!database) continue;
    const known = databases.get(database.url)?.companies ?? [];
    databases.set(database.url, {
      url: database.url,
      companies: [...new Set([...known, ...database.companies])],
    });
  }
  const before = await Promise.all([...databases.values()].map(invoicesOf));
  const figures =
    loads.length > 1
      ? await interleavedLoads(loads, run.config, TURNS)
      : [await createLoad(first.name, first.label, first.urls, run.config, first.next)];
  const after = await Promise.all([...databases.values()].map(invoicesOf));
  [...databases.keys()].forEach((url, index) => {
    const cases = figures.filter((_, load) => loads[load].database?.url === url);
    const answered = cases.reduce((sum, case_) => sum + case_.completed, 0);
    const stored = after[index] - before[index];
    if (stored < answered) {
      throw new Error(
        `${cases.map((c) => c.name).join(' + ')}: ${answered} creates answered, ${stored} invoices stored`,
      );
    }
  });
  return figures;
}

export async function invoicesOf(database: TurnLoad['database']): Promise<number> {
  if (!database) return 0;
  const client = new Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM invoices WHERE company_id = ANY($1::uuid[])',
      [database.companies.map((company) => company.companyId)],
    );
    return rows[0].n;
  } finally {
    await client.end();
  }
}
