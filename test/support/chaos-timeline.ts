/** One HTTP attempt as a client saw it: when its answer (or failure) arrived, from which process. */
export interface RecordedAttempt {
  /** Which server the attempt went to, e.g. `api0`. */
  target: string;
  method: string;
  path: string;
  startedAt: number;
  /** When the status line arrived, or when the attempt failed without one. */
  at: number;
  status?: number;
  code?: string;
  replayed: boolean;
  /** Set when no answer arrived (connection refused or reset, timeout). */
  error?: string;
}

export type FaultKind = 'api_kill' | 'worker_kill' | 'postgres_restart' | 'sandbox_kill';

/** A fault the suite injected: from the moment it struck until the system was whole again. */
export interface InjectedFault {
  kind: FaultKind;
  /** The process hit (`api0`, `worker`, `postgres`, `sandbox`). */
  target: string;
  startedAt: number;
  /** When the process (or server) was back: restarted and listening. */
  recoveredAt?: number;
}

export interface FiveHundredsByWindow {
  inside: RecordedAttempt[];
  outside: RecordedAttempt[];
}

/**
 * The chaos suite's record: every attempt every client made, with a timestamp, and every
 * fault injected. A 5xx is excused only inside the window of a fault that can cause it —
 * from the fault until `graceMs` after recovery — and only for the processes that fault
 * touches: a killed API excuses its own answers, a database restart every API's; a worker kill
 * excuses none, and neither does a killed payment provider (the API answers `202` without it).
 */
export class ChaosTimeline {
  readonly attempts: RecordedAttempt[] = [];
  readonly faults: InjectedFault[] = [];

  begin(kind: FaultKind, target: string): InjectedFault {
    const fault: InjectedFault = { kind, target, startedAt: Date.now() };
    this.faults.push(fault);
    return fault;
  }

  recovered(fault: InjectedFault): void {
    fault.recoveredAt = Date.now();
  }

  /** A `fetch` that records every attempt sent through it as an attempt to `target`. */
  recordingFetch(target: string): typeof fetch {
    return async (input, init) => {
      // Duck-typed: a Request may come from another realm under Jest.
      const request = typeof input === 'object' && 'method' in input ? input : undefined;
      const url = new URL(request?.url ?? String(input));
      const method = init?.method ?? request?.method ?? 'GET';
      const startedAt = Date.now();
      let response: Response;
      try {
        response = await fetch(input, init);
      } catch (error) {
        this.attempts.push({
          target,
          method,
          path: url.pathname,
          startedAt,
          at: Date.now(),
          replayed: false,
          error: describeError(error),
        });
        throw error;
      }
      const attempt: RecordedAttempt = {
        target,
        method,
        path: url.pathname,
        startedAt,
        at: Date.now(),
        status: response.status,
        replayed: response.headers.get('idempotent-replayed') === 'true',
      };
      this.attempts.push(attempt);
      if (response.status >= 400) attempt.code = await problemCode(response.clone());
      return response;
    };
  }

  /** Every 5xx answer, split by whether an injected fault excuses it. */
  fiveHundreds(graceMs: number): FiveHundredsByWindow {
    const result: FiveHundredsByWindow = { inside: [], outside: [] };
    for (const attempt of this.attempts) {
      if (attempt.status === undefined || attempt.status < 500) continue;
      const excused = this.faults.some(
        (fault) =>
          touches(fault, attempt.target) &&
          attempt.at >= fault.startedAt &&
          attempt.at <= (fault.recoveredAt ?? Number.POSITIVE_INFINITY) + graceMs,
      );
      (excused ? result.inside : result.outside).push(attempt);
    }
    return result;
  }
}

function touches(fault: InjectedFault, target: string): boolean {
  switch (fault.kind) {
    case 'postgres_restart':
      return true;
    case 'api_kill':
      return fault.target === target;
    case 'worker_kill':
    case 'sandbox_kill':
      return false;
  }
}

async function problemCode(response: Response): Promise<string | undefined> {
  try {
    const body = (await response.json()) as { code?: unknown };
    return typeof body.code === 'string' ? body.code : undefined;
  } catch {
    return undefined;
  }
}

/** Duck-typed: errors thrown by fetch come from another realm under Jest, so instanceof fails. */
function describeError(error: unknown): string {
  const { name, message, cause } = (error ?? {}) as {
    name?: unknown;
    message?: unknown;
    cause?: { code?: unknown };
  };
  const code = typeof cause?.code === 'string' ? ` (${cause.code})` : '';
  return `${String(name ?? 'Error')}: ${String(message ?? error)}${code}`;
}
