import { Webhook } from 'standardwebhooks';
import type { SandboxLogger } from './sandbox-logger';
import type { Faults } from './sandbox-faults';
import type { SandboxStore, StoredEvent } from './sandbox-store';

export interface DispatcherOptions {
  url: string;
  /** `whsec_…`, the Standard Webhooks signing secret (PAYMENT_PROVIDER_WEBHOOK_SECRET). */
  secret: string;
  timeoutMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
}

/**
 * Sends the stored events to the webhook URL, at least once: an event stays pending (in the store,
 * so across restarts) until a 2xx answered it `copies` times. One attempt at a time; the next
 * event is the oldest due one, or a random due one with `reorder_webhooks`. Every attempt signs
 * the stored body anew per Standard Webhooks (`webhook-id` = event id, the attempt's timestamp).
 * A failure (non-2xx, redirect, timeout, no connection) is retried after
 * min(retryMax, retryBase·2^(failures−1)) ±20 %, for ever; a planned duplicate follows a success
 * after retryBase ±20 %.
 */
export class WebhookDispatcher {
  private readonly signer: Webhook;
  private stopped = false;
  private wakeUp: (() => void) | undefined;
  private readonly stopping = new AbortController();
  private running: Promise<void> | undefined;

  constructor(
    private readonly store: SandboxStore,
    private readonly faults: Faults,
    private readonly options: DispatcherOptions,
    private readonly logger: SandboxLogger,
  ) {
    this.signer = new Webhook(options.secret);
  }

  start(): void {
    this.running = this.loop();
  }

  /** New or changed events: look again now instead of at the next planned attempt. */
  wake(): void {
    this.wakeUp?.();
  }

  /** Ends the loop; an attempt in progress is aborted and stays pending. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    this.wake();
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const { state } = this.store;
      const now = Date.now();
      const pending = [...state.pendingEventIds].map((id) => state.events.get(id)!);
      const due = pending.filter((row) => row.event.nextAttemptAt <= now).sort((a, b) => a.seq - b.seq);
      if (due.length === 0) {
        const next = Math.min(...pending.map((row) => row.event.nextAttemptAt));
        await this.sleep(next - now);
        continue;
      }
      try {
        await this.attempt(this.faults.pick(due).event);
      } catch (error) {
        // The store failed: nothing more can be recorded.
        this.logger.error(`webhook dispatcher stopped: ${String(error)}`);
        return;
      }
    }
  }

  private async attempt(event: StoredEvent): Promise<void> {
    const at = new Date();
    let failure: string | null = null;
    try {
      const response = await fetch(this.options.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'ledgerkey-provider-sandbox',
          ...signedHeaders(this.signer, event, at),
        },
        body: event.body,
        redirect: 'manual',
        signal: AbortSignal.any([AbortSignal.timeout(this.options.timeoutMs), this.stopping.signal]),
      });
      await response.body?.cancel();
      if (response.status < 200 || response.status > 299) failure = `answered ${response.status}`;
    } catch (error) {
      failure = error instanceof Error ? `${error.message}${causeOf(error)}` : String(error);
    }
    if (this.stopped) return;
    await this.store.commit((state) => {
      const row = state.events.get(event.id);
      // Reset while the attempt ran: the event is gone.
      if (!row) return { ops: [], result: undefined };
      const current = row.event;
      const now = Date.now();
      const next: StoredEvent =
        failure === null
          ? {
              ...current,
              delivered: current.delivered + 1,
              attempts: current.attempts + 1,
              failures: 0,
              nextAttemptAt: now + Math.round(this.options.retryBaseMs * this.faults.jitter()),
              lastError: null,
            }
          : {
              ...current,
              attempts: current.attempts + 1,
              failures: current.failures + 1,
              nextAttemptAt: now + this.retryDelayMs(current.failures + 1),
              lastError: failure,
            };
      return { ops: [{ op: 'event', event: next }], result: undefined };
    });
    if (failure !== null) this.logger.debug(`webhook ${event.id} (${event.type}) attempt failed: ${failure}`);
  }

  private retryDelayMs(failures: number): number {
    const { retryBaseMs, retryMaxMs } = this.options;
    const delay = Math.min(retryMaxMs, retryBaseMs * 2 ** Math.min(failures - 1, 40));
    return Math.round(delay * this.faults.jitter());
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve();
      };
      // No pending event: sleep until woken (setTimeout caps at ~24.8 days anyway).
      const timer = setTimeout(
        done,
        Number.isFinite(ms) ? Math.max(0, Math.min(ms, 2 ** 31 - 1)) : 2 ** 31 - 1,
      );
      this.wakeUp = done;
    });
  }
}

/**
 * The Standard Webhooks headers of one attempt: `webhook-id` is the event id on every attempt (the
 * receiver deduplicates by it), the timestamp and signature are the attempt's own.
 */
export function signedHeaders(
  signer: Webhook,
  event: Pick<StoredEvent, 'id' | 'body'>,
  at: Date,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  return {
    'webhook-id': event.id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signer.sign(event.id, at, event.body),
  };
}

function causeOf(error: Error): string {
  const cause = error.cause;
  return cause instanceof Error ? ` (${cause.message})` : '';
}
