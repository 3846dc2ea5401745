import { mkdir, open, readFile, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Charge, EventType, Payout } from './sandbox-objects';

/** A stored answer of a request that changed something, replayed for the same Idempotency-Key. */
export interface IdempotencyRecord {
  /** e.g. `charge.create`; keys are scoped to the operation. */
  operation: string;
  key: string;
  /** The normalized request parameters: the same key with other parameters is refused. */
  fingerprint: string;
  status: number;
  body: string;
}

/** A webhook event and its delivery state. */
export interface StoredEvent {
  id: string;
  type: EventType;
  createdAt: string;
  /** The exact JSON body, signed and sent on every attempt. */
  body: string;
  /** 2 when the duplicate_webhook fault picked it: it is delivered twice. */
  copies: number;
  /** Successful deliveries so far; the event is pending while this is below `copies`. */
  delivered: number;
  attempts: number;
  /** Failed attempts since the last success: the backoff exponent. */
  failures: number;
  /** Epoch milliseconds of the next attempt. */
  nextAttemptAt: number;
  lastError: string | null;
}

/** One change; a commit writes a list of them as one line. */
export type StoreOp =
  | { op: 'charge'; charge: Charge }
  | { op: 'drop'; chargeId: string }
  | { op: 'payout'; payout: Payout }
  | { op: 'event'; event: StoredEvent }
  | { op: 'idempotency'; record: IdempotencyRecord };

export interface ChargeRow {
  seq: number;
  charge: Charge;
  /** Forgotten through `DELETE /_sandbox/charges/{id}`: invisible to the API, still counted. */
  dropped: boolean;
}

/** What the sandbox holds, in memory; only committed (fsynced) changes are ever applied to it. */
export class SandboxState {
  readonly charges = new Map<string, ChargeRow>();
  readonly chargeIdsByReference = new Map<string, string[]>();
  readonly payouts = new Map<string, { seq: number; payout: Payout }>();
  readonly events = new Map<string, { seq: number; event: StoredEvent }>();
  /** Ids of events not yet delivered `copies` times. */
  readonly pendingEventIds = new Set<string>();
  readonly idempotency = new Map<string, IdempotencyRecord>();
  private seq = 0;

  apply(op: StoreOp): void {
    switch (op.op) {
      case 'charge': {
        const row = this.charges.get(op.charge.id);
        if (row) {
          row.charge = op.charge;
        } else {
          this.charges.set(op.charge.id, { seq: ++this.seq, charge: op.charge, dropped: false });
          const ids = this.chargeIdsByReference.get(op.charge.reference) ?? [];
          ids.push(op.charge.id);
          this.chargeIdsByReference.set(op.charge.reference, ids);
        }
        return;
      }
      case 'drop': {
        const row = this.charges.get(op.chargeId);
        if (row) row.dropped = true;
        return;
      }
      case 'payout': {
        const row = this.payouts.get(op.payout.id);
        if (row) row.payout = op.payout;
        else this.payouts.set(op.payout.id, { seq: ++this.seq, payout: op.payout });
        return;
      }
      case 'event': {
        const row = this.events.get(op.event.id);
        if (row) row.event = op.event;
        else this.events.set(op.event.id, { seq: ++this.seq, event: op.event });
        if (op.event.delivered < op.event.copies) this.pendingEventIds.add(op.event.id);
        else this.pendingEventIds.delete(op.event.id);
        return;
      }
      case 'idempotency':
        this.idempotency.set(idempotencyId(op.record.operation, op.record.key), op.record);
        return;
    }
  }

  /** Every object as the ops that recreate it, in creation order: the compacted log. */
  snapshot(): StoreOp[][] {
    const ops: StoreOp[][] = [];
    for (const row of this.charges.values()) {
      ops.push(
        row.dropped
          ? [
              { op: 'charge', charge: row.charge },
              { op: 'drop', chargeId: row.charge.id },
            ]
          : [{ op: 'charge', charge: row.charge }],
      );
    }
    for (const { payout } of this.payouts.values()) ops.push([{ op: 'payout', payout }]);
    for (const { event } of this.events.values()) ops.push([{ op: 'event', event }]);
    for (const record of this.idempotency.values()) ops.push([{ op: 'idempotency', record }]);
    return ops;
  }
}

export function idempotencyId(operation: string, key: string): string {
  return `${operation}\u0000${key}`;
}

/** What a commit decided: the changes to write, and what to hand back once they are durable. */
export interface Decision<Result> {
  ops: StoreOp[];
  result: Result;
}

const LOG_FILE = 'state.jsonl';

/**
 * The sandbox's durable state: an append-only JSON-lines log under the data dir, one line per
 * commit (`{"at":…,"ops":[…]}`), fdatasync'ed before the commit resolves, so whatever the sandbox
 * answered survives a SIGKILL. Commits run one at a time (in-process mutex): each decides on the
 * state as committed so far, is written, then applied to memory — readers never see a change that
 * is not on disk. At open the log is replayed (a torn last line, from a crash mid-write, was never
 * answered and is ignored) and rewritten compacted (temporary file, fsync, rename, fsync of the
 * folder). One process per data dir: `acquireDataDirLock` guards that.
 */
export class SandboxStore {
  state = new SandboxState();
  /** Increments on every reset: work that started before one must not land after it. */
  generation = 0;
  private tail: Promise<unknown> = Promise.resolve();
  private failure: unknown;

  private constructor(
    private readonly dataDir: string,
    private handle: FileHandle,
  ) {}

  /**
   * Replays and compacts the log under `dataDir`, creating the folder and log when missing.
   * @throws Error when a line other than the last cannot be read (the log is damaged)
   */
  static async open(dataDir: string): Promise<SandboxStore> {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const path = join(dataDir, LOG_FILE);
    const state = new SandboxState();
    let text = '';
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const lines = text.split('\n');
    lines.forEach((line, index) => {
      if (line === '') return;
      let entry: { ops: StoreOp[] };
      try {
        entry = JSON.parse(line) as { ops: StoreOp[] };
      } catch (error) {
        // Only a last line without its newline can be torn (a crash during its write); it was
        // never answered. Any other unreadable line is damage, not a crash.
        if (index === lines.length - 1) return;
        throw new Error(`${path}: line ${index + 1} cannot be read; the log is damaged`, { cause: error });
      }
      for (const op of entry.ops) state.apply(op);
    });
    await writeCompacted(dataDir, state);
    const store = new SandboxStore(dataDir, await open(path, 'a', 0o600));
    store.state = state;
    return store;
  }

  /**
   * Runs `decide` on the committed state after every earlier commit, writes its ops as one line and
   * syncs it, applies them, and resolves with its result. An error thrown by `decide` rejects
   * without writing anything.
   * @throws Error when the store failed to write before (the process should stop)
   */
  commit<Result>(decide: (state: SandboxState) => Decision<Result>): Promise<Result> {
    const run = this.tail.then(async () => {
      if (this.failure !== undefined)
        throw new Error('the sandbox store failed to write earlier', { cause: this.failure });
      const { ops, result } = decide(this.state);
      if (ops.length === 0) return result;
      try {
        await this.handle.write(`${JSON.stringify({ at: new Date().toISOString(), ops })}\n`);
        await this.handle.datasync();
      } catch (error) {
        // A half-written line would be followed by the next one: stop accepting writes.
        this.failure = error;
        throw error;
      }
      for (const op of ops) this.state.apply(op);
      return result;
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Forgets everything (after every earlier commit): the log is replaced by an empty one. */
  reset(): Promise<void> {
    const run = this.tail.then(async () => {
      await this.handle.close();
      this.state = new SandboxState();
      this.generation += 1;
      await writeCompacted(this.dataDir, this.state);
      this.handle = await open(join(this.dataDir, LOG_FILE), 'a', 0o600);
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    await this.tail;
    await this.handle.close();
  }
}

/** Replaces the log by the state's snapshot, atomically and durably. */
async function writeCompacted(dataDir: string, state: SandboxState): Promise<void> {
  const path = join(dataDir, LOG_FILE);
  const temporary = `${path}.tmp`;
  const at = new Date().toISOString();
  const handle = await open(temporary, 'w', 0o600);
  try {
    const lines = state.snapshot().map((ops) => `${JSON.stringify({ at, ops })}\n`);
    await handle.writeFile(lines.join(''));
    await handle.datasync();
  } finally {
    await handle.close();
  }
  await rename(temporary, path);
  const folder = await open(dataDir, 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}
