import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  type DeferredWrite,
  DeferredWrites,
  Propagation,
  Transactional,
  TransactionHost,
  type PgTransactionalAdapter,
  type KeysetSource,
  keysetPage,
  type Page,
  type PageRequest,
} from '@ledgerkey/database';
import type { EventType, EventView } from './event.view';

interface EventRow {
  id: string;
  type: EventType;
  data: { object: unknown };
  created_at: Date;
}

function toView(row: EventRow): EventView {
  return {
    id: row.id,
    object: 'event',
    type: row.type,
    createdAt: row.created_at.toISOString(),
    data: row.data,
  };
}

/** Keyset order of the list: the company's gapless event position (unique per company). */
const EVENTS: KeysetSource = {
  table: 'events',
  alias: 'e',
  select: 'SELECT e.id, e.type, e.data, e.created_at FROM events e',
  orderKeys: ['position'],
};

export interface EventListFilter {
  type?: EventType;
}

/**
 * Inserts the event at the company's next position and fans it out, in one statement:
 * `fan_out_event` (OutboxDeliveries1765600000000) inserts a pending webhook delivery per enabled
 * endpoint of the company subscribed to the type, and notifies the worker's dispatcher only when
 * it inserted one. The event and its deliveries commit together; a company without endpoints pays
 * one index probe, and nothing is queued.
 */
function appendEventWrite(
  id: string,
  companyId: string,
  type: EventType,
  data: string,
  occurredAt: string,
): DeferredWrite {
  return {
    kind: 'events',
    ctes: (bind, name) => {
      const company = bind(companyId);
      return [
        [
          'next',
          `INSERT INTO event_sequences AS s (company_id, last_position) VALUES (${company}, 1)
           ON CONFLICT (company_id) DO UPDATE SET last_position = s.last_position + 1
           RETURNING last_position`,
        ],
        [
          'event',
          `INSERT INTO events (id, company_id, position, type, data, created_at)
           SELECT ${bind(id)}, ${company}, next.last_position, ${bind(type)}, ${bind(data)}, ${bind(occurredAt)}
             FROM ${name('next')} next
           RETURNING id, company_id, type`,
        ],
        [
          'fan_out',
          `SELECT fan_out_event(event.company_id, event.id, event.type) FROM ${name('event')} event`,
        ],
      ];
    },
    reads: ['fan_out'],
  };
}

/** The outbox. Every method takes the company id first. */
@Injectable()
export class EventsRepository {
  constructor(
    private readonly txHost: TransactionHost<PgTransactionalAdapter>,
    private readonly writes: DeferredWrites,
  ) {}

  /**
   * Records that a document was created and creates its webhook deliveries, in the caller's
   * transaction: the event and its deliveries exist if and only if the document does, and a
   * replay (which runs nothing) emits nothing. One statement. An endpoint receives the events
   * appended after it was registered (committed before this statement began).
   *
   * The event takes the company's next position from its `event_sequences` row, whose lock is
   * held until this transaction ends: the next event of the company cannot take a position until
   * this one has committed (and is visible) or rolled back (its position is then taken again). So
   * positions are gapless per company and commit in order. Callers append as their last write,
   * so the lock is held only for the commit; event-writing transactions of one company serialize
   * from here to COMMIT.
   */
  @Transactional(Propagation.Mandatory)
  async append(
    companyId: string,
    type: EventType,
    object: { createdAt: string },
    /** When it happened, if not when `object` was created (a payment's outcome). */
    occurredAt: string = object.createdAt,
  ): Promise<string> {
    const event = this.appending(companyId, type, object, occurredAt);
    await this.writes.write(event.write);
    return event.id;
  }

  /** `append` as a write to send with others (`DeferredWrites`), as a use case's last write. */
  appending(
    companyId: string,
    type: EventType,
    object: { createdAt: string },
    occurredAt: string = object.createdAt,
  ): { id: string; write: DeferredWrite } {
    const id = randomUUID();
    return { id, write: appendEventWrite(id, companyId, type, JSON.stringify({ object }), occurredAt) };
  }

  /**
   * Events in commit order, after `startingAfter`. Positions commit in order (see `append`), so
   * every committed event is listed at once, and an event that commits later always has a higher
   * position than any a client has already seen: paging with `startingAfter` never skips one.
   * Other companies' transactions delay nothing. (That holds for `order: 'asc'` with
   * `startingAfter`; newest first is for browsing.)
   */
  list(companyId: string, page: PageRequest, filter: EventListFilter = {}): Promise<Page<EventView>> {
    const { type } = filter;
    return keysetPage(
      this.txHost.tx,
      EVENTS,
      companyId,
      page,
      type === undefined ? [] : [(bind) => `e.type = ${bind(type)}`],
      toView,
    );
  }

  async findById(companyId: string, eventId: string): Promise<EventView | null> {
    const rows = await this.txHost.tx.query<EventRow>(
      `SELECT id, type, data, created_at FROM events WHERE company_id = $1 AND id = $2`,
      [companyId, eventId],
    );
    return rows[0] ? toView(rows[0]) : null;
  }
}
