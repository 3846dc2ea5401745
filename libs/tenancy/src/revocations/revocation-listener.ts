import { type BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { Client } from 'pg';
import { VerifiedApiKeys } from './verified-api-keys';

/** Where migration 1766100000000's trigger announces a revoked key (payload: its hash, hex). */
export const API_KEY_REVOKED_CHANNEL = 'api_key_revoked';
/**
 * The listener connection's `application_name`. Each API process holds exactly one such
 * connection, so counting them in pg_stat_activity counts the API processes (rate limits).
 */
export const REVOCATION_LISTENER_APPLICATION_NAME = 'ledgerkey-api-key-listener';

/** The connection is checked (and the API processes counted) this often … */
const PING_INTERVAL_MS = 1_000;
/** … and given up on when a check takes longer: then cached keys fall back to the short TTL. */
const PING_TIMEOUT_MS = 2_000;
const RECONNECT_MAX_DELAY_MS = 5_000;

/**
 * Hears of API key revocations on every API process: one dedicated connection LISTENs on
 * `api_key_revoked` and evicts each announced key from `VerifiedApiKeys`. The connection is
 * checked every second; while it is down (or a check hangs for 2 s) the cache trusts keys for
 * 5 s only, and it reconnects with backoff (at most 5 s apart). Its check also counts the API
 * processes on the database (`liveInstances`). Idle until `start` (API processes only, not the
 * CLI). No UNLISTEN at stop: ending the session ends its LISTEN.
 */
@Injectable()
export class RevocationListener implements BeforeApplicationShutdown {
  private readonly logger = new Logger('RevocationListener');
  private connectionString: string | undefined;
  private client: Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private stopped = false;
  private instances = 1;

  constructor(private readonly verified: VerifiedApiKeys) {}

  /** API processes listening on this database at the last check (this one included); 1 until known. */
  get liveInstances(): number {
    return this.instances;
  }

  get connected(): boolean {
    return this.client !== undefined;
  }

  /** Connects (the first attempt is awaited; a failure is retried in the background, never thrown). */
  async start(connectionString: string): Promise<void> {
    this.connectionString = connectionString;
    this.stopped = false;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    this.verified.deaf();
    await client?.end().catch(() => undefined);
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.stop();
  }

  private async connect(): Promise<void> {
    if (this.stopped || this.connectionString === undefined) return;
    const client = new Client({
      connectionString: this.connectionString,
      application_name: REVOCATION_LISTENER_APPLICATION_NAME,
      keepAlive: true,
      connectionTimeoutMillis: 5_000,
    });
    let gone = false;
    const lost = (reason: unknown): void => {
      if (gone) return;
      gone = true;
      void client.end().catch(() => undefined);
      if (this.client === client) {
        this.client = undefined;
        this.verified.deaf();
        clearTimeout(this.timer);
        if (!this.stopped) this.logger.warn(`revocation listener lost its connection: ${messageOf(reason)}`);
      }
      this.reconnectLater();
    };
    client.on('error', lost);
    client.on('end', () => lost('connection ended'));
    client.on('notification', (message) => {
      if (message.channel === API_KEY_REVOKED_CHANNEL && message.payload)
        this.verified.forget(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${API_KEY_REVOKED_CHANNEL}`);
    } catch (error) {
      if (this.failures === 0) this.logger.warn(`revocation listener cannot connect: ${messageOf(error)}`);
      lost(error);
      return;
    }
    if (this.stopped || gone) {
      await client.end().catch(() => undefined);
      return;
    }
    if (this.failures > 0) this.logger.log('revocation listener connected again');
    this.failures = 0;
    this.client = client;
    this.verified.listening();
    await this.check(client, lost);
  }

  /** Counts the API processes, proving the connection alive; schedules the next check. */
  private async check(client: Client, lost: (reason: unknown) => void): Promise<void> {
    let timeout: NodeJS.Timeout | undefined;
    try {
      const rows = await Promise.race([
        client.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = $1`,
          [REVOCATION_LISTENER_APPLICATION_NAME],
        ),
        new Promise<never>((_, reject) => {
          timeout = setTimeout(
            () => reject(new Error(`no answer within ${PING_TIMEOUT_MS} ms`)),
            PING_TIMEOUT_MS,
          );
        }),
      ]);
      this.instances = Math.max(1, rows.rows[0].n);
    } catch (error) {
      lost(error);
      return;
    } finally {
      clearTimeout(timeout);
    }
    if (this.client !== client) return;
    this.timer = setTimeout(() => void this.check(client, lost), PING_INTERVAL_MS);
    this.timer.unref();
  }

  private reconnectLater(): void {
    if (this.stopped) return;
    this.failures += 1;
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () => void this.connect(),
      Math.min(RECONNECT_MAX_DELAY_MS, 250 * 2 ** Math.min(this.failures, 5)),
    );
    this.timer.unref();
  }
}

function messageOf(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}
