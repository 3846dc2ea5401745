/**
 * The database's own limit for creates: pgbench running the service's statements (see
 * service-statements.ts) with no Node client in the way.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cpuPerRequest, cpuTimes, describeCpu } from './cpu-accounting';
import { type Figures, figuresFromLatencies } from './load';

const run = promisify(execFile);
export const PGBENCH = process.env.PGBENCH ?? 'pgbench';

export async function pgbenchVersion(): Promise<string | null> {
  try {
    return (await run(PGBENCH, ['--version'])).stdout.trim();
  } catch {
    return null;
  }
}

/** pgbench takes a libpq connection URI as its database argument. */
function pgbenchArgs(protocol: string, scripts: string[]): string[] {
  return ['--no-vacuum', '--protocol', protocol, ...scripts.flatMap((script) => ['--file', `${script}@1`])];
}

/** Writes the scripts and runs one transaction of the first, so a bad script fails loudly here. */
export async function prepareScripts(
  dir: string,
  name: string,
  scripts: string[],
  url: string,
  protocol: string,
): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const files = scripts.map((script, i) => {
    const file = join(dir, `${name}-${String(i + 1).padStart(2, '0')}.sql`);
    writeFileSync(file, script);
    return file;
  });
  try {
    await run(PGBENCH, [
      ...pgbenchArgs(protocol, files.slice(0, 1)),
      '--client',
      '1',
      '--transactions',
      '1',
      url,
    ]);
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`pgbench script ${files[0]} failed:\n${stderr ?? ''}${stdout ?? ''}`, { cause: error });
  }
  return files;
}

export async function pgbenchLoad(
  name: string,
  label: string,
  url: string,
  files: string[],
  options: { clients: number; seconds: number; protocol: string; dir: string },
): Promise<Figures> {
  const logDir = join(options.dir, `log-${name}`);
  mkdirSync(logDir, { recursive: true });
  const args = [
    ...pgbenchArgs(options.protocol, files),
    '--client',
    String(options.clients),
    '--jobs',
    '2',
    '--time',
    String(options.seconds),
    '--log',
    '--log-prefix',
    join(logDir, 'tx'),
    url,
  ];
  let stdout: string;
  const cpuBefore = cpuTimes();
  try {
    ({ stdout } = await run(PGBENCH, args, { maxBuffer: 16 * 1024 * 1024 }));
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    throw new Error(`pgbench ${name} failed:\n${failed.stderr ?? ''}${failed.stdout ?? ''}`, {
      cause: error,
    });
  }
  // Per-transaction log lines: client_id transaction_no latency_µs script_no epoch_s epoch_µs
  const latencies: number[] = [];
  for (const file of readdirSync(logDir)) {
    for (const line of readFileSync(join(logDir, file), 'utf8').split('\n')) {
      const fields = line.split(' ');
      if (fields.length < 6) continue;
      latencies.push(Number(fields[2]) / 1000);
    }
  }
  const failed = Number(/number of failed transactions: (\d+)/.exec(stdout)?.[1] ?? 0);
  const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(stdout)?.[1] ?? NaN);
  const figures = figuresFromLatencies(name, label, latencies, options.seconds, failed);
  // pgbench's own rate excludes connection set-up; prefer it to count / duration.
  if (Number.isFinite(tps)) figures.requestsPerSecond = Math.round(tps);
  // pgbench, a child of this process, counts as the client.
  figures.cpuMsPerRequest = cpuPerRequest(cpuBefore, cpuTimes(), figures.completed);
  const cpu = describeCpu(figures.cpuMsPerRequest);
  console.log(
    `(${name}) ${label}: ${figures.requestsPerSecond} tps, p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms` +
      (failed ? `, ${failed} failed` : '') +
      (cpu ? `; CPU ms per transaction: ${cpu}` : ''),
  );
  return figures;
}
