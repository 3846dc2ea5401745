/**
 * Preloaded into one API process by the bench (`node --require …/capture-sql.js`) when
 * BENCH_SQL_CAPTURE names a file: appends every statement the process sends through `pg` — text,
 * parameters as pg sends them, and the first row of the answer — one JSON line each. The bench
 * reads the lines of one create and turns them into the pgbench script and the Node baseline,
 * so both always run the statements the service issues today.
 */
import { appendFileSync } from 'node:fs';
import { Client } from 'pg';

export interface CapturedStatement {
  text: string;
  /** Each parameter as the text pg sends (bytea as `\x…`), or null. */
  values: Array<string | null>;
  row: Record<string, unknown> | null;
  failed?: boolean;
}

// pg's own conversion of a JS value into the parameter text it sends (dates, arrays, JSON).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { prepareValue } = require('pg/lib/utils') as { prepareValue: (value: unknown) => unknown };

function asText(value: unknown): string | null {
  const prepared = prepareValue(value);
  if (prepared === null || prepared === undefined) return null;
  if (Buffer.isBuffer(prepared)) return `\\x${prepared.toString('hex')}`;
  return String(prepared);
}

const file = process.env.BENCH_SQL_CAPTURE;
if (file) {
  const original = Client.prototype.query as (...args: unknown[]) => unknown;
  const patched = function (this: Client, ...args: unknown[]): unknown {
    const [first, second] = args;
    const config =
      typeof first === 'object' && first !== null ? (first as { text?: unknown; values?: unknown }) : {};
    const text = typeof first === 'string' ? first : config.text;
    const values = Array.isArray(second) ? second : Array.isArray(config.values) ? config.values : [];
    const result = original.apply(this, args);
    if (typeof text === 'string' && result instanceof Promise) {
      const entry = { text, values: values.map(asText) };
      const write = (statement: CapturedStatement) => appendFileSync(file, `${JSON.stringify(statement)}\n`);
      result.then(
        (answer: { rows?: Array<Record<string, unknown>> }) =>
          write({ ...entry, row: answer?.rows?.[0] ?? null }),
        () => write({ ...entry, row: null, failed: true }),
      );
    }
    return result;
  };
  Client.prototype.query = patched as unknown as typeof Client.prototype.query;
}
