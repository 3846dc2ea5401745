/**
 * The statements of one idempotent create, as the service sends them today: captured from a
 * real API process (capture-sql.ts) and turned into templates that the pgbench limit and the
 * Node-client baseline both run. Nothing here is a hand-written copy of the service's SQL, so
 * the limit follows the service when its statements change.
 *
 * What varies per create, and how it is found in the captured text:
 * - the company id (the capture company's id) → the company of the script or request;
 * - every other UUID (document, entry and event ids, the idempotency key, which the capture
 *   sends as a UUID) → fresh per create;
 * - the gapless number: the capture company's counter is preset so that its create takes
 *   SEQUENCE_TOKEN, a number found nowhere else; the statement whose answer holds it is the
 *   counter, and later occurrences (number, sequence, JSON copies) take its answer.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, type Pool } from 'pg';
import type { CapturedStatement } from './capture-sql';
import { type Company, invoiceBody, newCompany, postCreate } from './load';
import { startApi, stop } from './processes';

export const SEQUENCE_TOKEN = 7654321;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

export interface CreateStatements {
  statements: CapturedStatement[];
  captureCompanyId: string;
  /** Index of the statement answering with the number, and its column; null if none. */
  counter: { index: number; column: string } | null;
}

/**
 * Runs one create against an API process that records its SQL, and returns that create's
 * statements (a first create warms the API-key cache, as under load).
 */
export async function captureCreateStatements(
  url: string,
  logDir: string,
  options: { poolSize: number; captureModule: string },
): Promise<CreateStatements> {
  const file = join(logDir, 'captured-sql.jsonl');
  // Without prepared statements every statement is sent unnamed, as pgbench sends them; BEGIN and
  // COMMIT are statements of their own to the capture (pipelined with their neighbours, but each
  // its own query): the same statements, one per round trip, as pgbench runs them.
  const api = await startApi(
    url,
    { RUN_WORKER: 'false', BENCH_SQL_CAPTURE: file, DATABASE_PREPARED_STATEMENTS: '0' },
    logDir,
    {
      poolSize: options.poolSize,
      logLevel: 'error',
      nodeArgs: ['--require', options.captureModule],
    },
  );
  try {
    const company = await newCompany(api.baseUrl, 7000);
    const warm = await postCreate(api.baseUrl, company, `warm-${randomUUID()}`, invoiceBody(0));
    if (warm.status !== 201) throw new Error(`capture warm-up: ${warm.status} ${await warm.text()}`);
    await presetCounter(url, company, SEQUENCE_TOKEN - 1);
    await sleep(200);
    const offset = statSync(file).size;
    const response = await postCreate(api.baseUrl, company, randomUUID(), invoiceBody(1));
    if (response.status !== 201)
      throw new Error(`capture create: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
    await sleep(300);
    // The offset is in bytes: slice before decoding (a migration's text before it may hold
    // characters of more than one byte when the capture process migrated a fresh database).
    const statements = readFileSync(file)
      .subarray(offset)
      .toString('utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as CapturedStatement);
    if (statements.length === 0) throw new Error('captured no statements for a create');
    if (statements.some((s) => s.failed)) throw new Error('a captured statement failed');
    if (
      !['BEGIN', 'START TRANSACTION'].includes(statements[0].text) ||
      statements.at(-1)?.text !== 'COMMIT'
    ) {
      throw new Error(
        `the captured create is not one whole transaction: ${statements.map((s) => s.text.slice(0, 30)).join(' | ')}`,
      );
    }
    return { statements, captureCompanyId: company.companyId, counter: findCounter(statements) };
  } finally {
    await stop(api);
  }
}

/** Sets the capture company's INV counter so that its next number is the token. */
async function presetCounter(url: string, company: Company, lastValue: number): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO document_sequences (company_id, document_type, series, last_value)
       VALUES ($1, 'invoice', 'INV', $2)
       ON CONFLICT (company_id, document_type, series) DO UPDATE SET last_value = EXCLUDED.last_value`,
      [company.companyId, lastValue],
    );
  } finally {
    await client.end();
  }
}

function findCounter(statements: CapturedStatement[]): CreateStatements['counter'] {
  const token = String(SEQUENCE_TOKEN);
  const index = statements.findIndex(
    (s) => s.row !== null && Object.values(s.row).some((value) => String(value) === token),
  );
  const uses = statements.map((s, i) => ({ i, used: s.values.some((v) => v !== null && v.includes(token)) }));
  if (index < 0) {
    if (uses.some((u) => u.used))
      throw new Error('the number is sent by the client but no statement returned it');
    return null;
  }
  if (uses.some((u) => u.used && u.i <= index))
    throw new Error('the number is sent before the counter returns it');
  const column = Object.entries(statements[index].row as Record<string, unknown>).find(
    ([, value]) => String(value) === token,
  )?.[0] as string;
  return { index, column };
}

/** Readable listing of the captured statements (for the report and the docs). */
export function describeStatements(capture: CreateStatements): string[] {
  return capture.statements.map((s) => s.text.replace(/\s+/g, ' ').trim().slice(0, 110));
}

// ---------------------------------------------------------------------------------------------
// pgbench

/** pgbench variables of one transaction: four random numbers that make the UUIDs. */
const PGBENCH_HEADER = [
  '\\set lk_a random(10000000, 99999999)',
  '\\set lk_b random(1000, 9999)',
  '\\set lk_c random(1000, 9999)',
  '\\set lk_d random(100000000000, 999999999999)',
];

/**
 * A pgbench script (for `-M simple`) of one create for one company. Parameters become literals;
 * pgbench substitutes `:lk_…` variables textually, also inside literals.
 */
export function pgbenchScript(capture: CreateStatements, companyId: string): string {
  const uuidIndex = new Map<string, number>();
  const lines = [...PGBENCH_HEADER];
  capture.statements.forEach((statement, i) => {
    const literal = (value: string | null): string => {
      if (value === null) return 'NULL';
      let text = value.replace(/'/g, "''");
      text = text.replace(UUID, (uuid) => {
        if (uuid === capture.captureCompanyId) return companyId;
        if (!uuidIndex.has(uuid)) uuidIndex.set(uuid, uuidIndex.size);
        const n = String(uuidIndex.get(uuid)).padStart(4, '0');
        return `:lk_a-:lk_b-:lk_c-${n}-:lk_d`;
      });
      if (capture.counter && i > capture.counter.index) {
        text = text.split(String(SEQUENCE_TOKEN)).join(`:lk_seq_${capture.counter.column}`);
      }
      // "key"::lk_x would read as a cast to pgbench; a space keeps it a variable (JSON allows it).
      return `'${text.replace(/::lk_/g, ': :lk_')}'`;
    };
    const sql = statement.text
      .trim()
      .replace(/\$(\d+)/g, (_, n: string) => literal(statement.values[Number(n) - 1]));
    if (capture.counter?.index === i) lines.push(sql, '\\gset lk_seq_');
    else lines.push(`${sql};`);
  });
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// The same statements through a Node client (`pg`), with parameters as the service sends them.

export async function runCreateThroughPg(
  pool: Pool,
  capture: CreateStatements,
  companyId: string,
): Promise<void> {
  const fresh = new Map<string, string>();
  let sequence: string | null = null;
  const client = await pool.connect();
  try {
    for (const [i, statement] of capture.statements.entries()) {
      const values = statement.values.map((value) => {
        if (value === null) return null;
        let text = value.replace(UUID, (uuid) => {
          if (uuid === capture.captureCompanyId) return companyId;
          if (!fresh.has(uuid)) fresh.set(uuid, randomUUID());
          return fresh.get(uuid) as string;
        });
        if (sequence !== null) text = text.split(String(SEQUENCE_TOKEN)).join(sequence);
        return text;
      });
      const result = await client.query<Record<string, unknown>>(statement.text, values);
      if (capture.counter?.index === i) sequence = String(result.rows[0][capture.counter.column]);
    }
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
