import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/** One request the receiver got, as it arrived. */
export interface ReceivedWebhook {
  /** Headers, lower-case names. */
  headers: Record<string, string>;
  /** The request target, e.g. `/webhooks`: tells apart endpoints registered with different paths. */
  path: string;
  body: string;
  receivedAt: Date;
  /** The status the receiver answered with, or 'hung' when it never answered. */
  answer: number | 'hung';
}

export interface WebhookReceiverBehaviour {
  /** Answer the first N requests with 500. */
  failFirst?: number;
  /** Never answer the first N requests (after failFirst ones). */
  hangFirst?: number;
}

/**
 * A real HTTP server on 127.0.0.1 that records every webhook request and answers 200 (or
 * fails / hangs the first requests, as told). Tests read `requests` and wait with `waitFor`.
 */
export class WebhookReceiver {
  readonly requests: ReceivedWebhook[] = [];
  private readonly server: Server;
  private readonly hanging = new Set<ServerResponse>();
  private behaviour: Required<WebhookReceiverBehaviour>;
  private port = 0;

  private constructor(behaviour: WebhookReceiverBehaviour) {
    this.behaviour = { failFirst: 0, hangFirst: 0, ...behaviour };
    this.server = createServer((request, response) => void this.handle(request, response));
  }

  static async start(behaviour: WebhookReceiverBehaviour = {}): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(behaviour);
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    receiver.port = (receiver.server.address() as { port: number }).port;
    return receiver;
  }

  /** The URL to register; `path` tells endpoints apart. */
  url(path = '/webhooks'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Requests whose `webhook-id` is the given event id. */
  requestsFor(eventId: string): ReceivedWebhook[] {
    return this.requests.filter((request) => request.headers['webhook-id'] === eventId);
  }

  /**
   * Polls until `condition` holds.
   * @throws Error naming what was received when it does not hold within the timeout
   */
  async waitFor(condition: (requests: ReceivedWebhook[]) => boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition(this.requests)) {
      if (Date.now() > deadline) {
        throw new Error(
          `webhook receiver: condition not met within ${timeoutMs} ms; received ${this.requests.length}: ` +
            JSON.stringify(this.requests.map((r) => ({ id: r.headers['webhook-id'], answer: r.answer }))),
        );
      }
      await sleep(50);
    }
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === 'string') headers[name] = value;
    }
    const index = this.requests.length;
    const record: ReceivedWebhook = {
      headers,
      path: request.url ?? '',
      body: Buffer.concat(chunks).toString('utf8'),
      receivedAt: new Date(),
      answer: 200,
    };
    this.requests.push(record);
    if (index < this.behaviour.failFirst) {
      record.answer = 500;
    } else if (index < this.behaviour.failFirst + this.behaviour.hangFirst) {
      record.answer = 'hung';
      this.hanging.add(response);
      response.once('close', () => this.hanging.delete(response));
      return;
    }
    response.writeHead(record.answer as number, { 'Content-Type': 'text/plain' });
    response.end(record.answer === 200 ? 'ok' : 'failing on purpose');
  }
}
