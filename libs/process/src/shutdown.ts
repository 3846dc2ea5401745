import type { LoggerService } from '@nestjs/common';

/** One thing a stop waits for, e.g. the HTTP server finishing its in-flight requests. */
export interface ShutdownStep {
  name: string;
  run(): Promise<unknown>;
}

/** Steps that run at the same time; the next phase starts when all of them ended or gave up. */
export interface ShutdownPhase {
  steps: ShutdownStep[];
  /** Share of the bound (0–1] by which this phase must end; later phases get the rest. */
  until: number;
}

export interface ShutdownOptions {
  /** SHUTDOWN_TIMEOUT_MS: the whole stop ends within this bound. */
  timeoutMs: number;
  logger: LoggerService;
  /** Ends the process; a test passes its own. */
  exit?: (code: number) => void;
}

/**
 * Stops the process at the first SIGTERM or SIGINT (further signals are ignored): runs the phases
 * in order within `timeoutMs` and exits — 0 when every step ended in time, 1 otherwise.
 */
export function stopOnSignals(phases: ShutdownPhase[], options: ShutdownOptions): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      options.logger.warn(`${signal} received while stopping; the stop ends within ${options.timeoutMs} ms`);
      return;
    }
    stopping = true;
    options.logger.log(`${signal} received: stopping (at most ${options.timeoutMs} ms)`);
    void shutdown(phases, options);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/**
 * Runs the phases in order, the steps of a phase at the same time. A step that has not ended by
 * its phase's deadline is given up on (logged, and the next phase starts: e.g. a job still waiting
 * for a database that is gone); an overall watchdog ends the process at `timeoutMs` whatever is
 * still pending, naming it. Exits 0 only when every step ended in time and without error.
 */
export async function shutdown(phases: ShutdownPhase[], options: ShutdownOptions): Promise<void> {
  const { timeoutMs, logger } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const started = Date.now();
  const pending = new Set<string>();
  const givenUp: string[] = [];
  let exited = false;
  const finish = (code: number): void => {
    if (exited) return;
    exited = true;
    clearTimeout(watchdog);
    exit(code);
  };
  const watchdog = setTimeout(() => {
    logger.error(
      `stop did not finish within ${timeoutMs} ms; still pending: ${[...pending].join(', ') || 'nothing'}; exiting`,
    );
    finish(1);
  }, timeoutMs);

  for (const phase of phases) {
    const deadline = started + timeoutMs * phase.until;
    const outcomes = await Promise.all(
      phase.steps.map((step) => runStep(step, deadline - Date.now(), pending, logger)),
    );
    if (exited) return;
    phase.steps.forEach((step, index) => {
      if (outcomes[index] !== 'ended') givenUp.push(`${step.name} (${outcomes[index]})`);
    });
  }
  const elapsed = Date.now() - started;
  if (givenUp.length === 0) {
    logger.log(`stopped in ${elapsed} ms`);
    finish(0);
  } else {
    logger.warn(`stopped in ${elapsed} ms without a clean end of: ${givenUp.join(', ')}`);
    finish(1);
  }
}

type StepOutcome = 'ended' | 'failed' | 'given up';

function runStep(
  step: ShutdownStep,
  budgetMs: number,
  pending: Set<string>,
  logger: LoggerService,
): Promise<StepOutcome> {
  pending.add(step.name);
  const ran = step.run().then(
    (): StepOutcome => 'ended',
    (error: unknown): StepOutcome => {
      logger.error(`stopping ${step.name} failed: ${error instanceof Error ? error.message : String(error)}`);
      return 'failed';
    },
  );
  void ran.then(() => pending.delete(step.name));
  let timer: NodeJS.Timeout | undefined;
  const givenUp = new Promise<StepOutcome>((resolve) => {
    timer = setTimeout(
      () => {
        logger.warn(`${step.name} did not stop within its share of the bound; going on without it`);
        resolve('given up');
      },
      Math.max(0, budgetMs),
    );
  });
  return Promise.race([ran, givenUp]).finally(() => clearTimeout(timer));
}
