import { readdirSync, readFileSync } from 'node:fs';

/** Who spent the machine's CPU during a case. */
export type CpuGroup = 'server' | 'postgres' | 'redis' | 'client' | 'other';

/** CPU time per group, in ms, summed over every process of the machine (Linux /proc). */
export type CpuTimes = Record<CpuGroup, number>;

const TICK_MS = 10; // USER_HZ is 100 on Linux

/**
 * The CPU time (user + system) of every process now, by group: this process (the load generator)
 * is `client`; other Node.js processes are the servers under test (API processes, the Redis
 * baseline, the bare HTTP server); `postgres` and `redis-server` are themselves. Empty where /proc
 * is not there.
 */
export function cpuTimes(): CpuTimes {
  const times: CpuTimes = { server: 0, postgres: 0, redis: 0, client: 0, other: 0 };
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return times;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    const { comm, ms } = parseStat(stat);
    times[groupOf(Number(entry), comm)] += ms;
  }
  return times;
}

/** CPU time (user + system) of one process so far, in ms, its waited-for children included. */
export function processCpuMs(pid: number): number {
  return parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8')).ms;
}

function parseStat(stat: string): { comm: string; ms: number } {
  // pid (comm) state ppid … : comm may hold spaces and parentheses, so split after its last ')'.
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  // utime, stime, and cutime, cstime: a process that ended and was waited for (a PostgreSQL
  // backend, pgbench) counts in its parent, so its whole time is in the difference of two
  // readings even though it is gone from the second.
  return {
    comm: stat.slice(stat.indexOf('(') + 1, close),
    ms: (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * TICK_MS,
  };
}

function groupOf(pid: number, comm: string): CpuGroup {
  if (pid === process.pid) return 'client';
  // Node 24 names its main thread, and so the process's comm, "MainThread": ask its command line.
  if (comm === 'node' || comm === 'MainThread') return isNode(pid) ? 'server' : 'other';
  if (comm.startsWith('postgres')) return 'postgres';
  if (comm.startsWith('redis-server')) return 'redis';
  return 'other';
}

function isNode(pid: number): boolean {
  try {
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
    return argv0 === 'node' || argv0.endsWith('/node');
  } catch {
    return false;
  }
}

/** CPU ms per completed request and group between two readings; groups that spent nothing are left out. */
export function cpuPerRequest(before: CpuTimes, after: CpuTimes, completed: number): Record<string, number> {
  const perRequest: Record<string, number> = {};
  if (completed === 0) return perRequest;
  for (const group of Object.keys(after) as CpuGroup[]) {
    const spent = after[group] - before[group];
    if (spent > 0) perRequest[group] = Math.round((spent / completed) * 100) / 100;
  }
  return perRequest;
}

/** "server 3.9, postgres 4.8, …" for a line of the report; empty when nothing was measured. */
export function describeCpu(perRequest: Record<string, number> | undefined): string {
  return Object.entries(perRequest ?? {})
    .map(([group, ms]) => `${group} ${ms}`)
    .join(', ');
}
