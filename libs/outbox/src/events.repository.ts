import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  Propagation,
  Transactional,
  TransactionHost,
  type TypeOrmTransactionalAdapter,
  type KeysetSource,
  keysetPage,
  type Page,
  type PageRequest,
} from '@ledgerkey/database';
import { enqueueJobSql, JobTasks } from '@ledgerkey/jobs';
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
 * Inserts event $1 of company $2 at the company's next position and enqueues its fan-out job, in
 * one statement: the event exists if and only if its fan-out job does.
 */
const APPEND_EVENT_SQL = `WITH next AS (
     INSERT INTO event_sequences AS s (company_id, last_position) VALUES ($2, 1)
     ON CONFLICT (company_id) DO UPDATE SET last_position = s.last_position + 1
     RETURNING last_position
   ), event AS (
     INSERT INTO events (id, company_id, position, type, data, created_at)
     SELECT $1, $2, next.last_position, $3, $4, $5 FROM next
     RETURNING id
   )
   -- The payload names the company, so the fan-out reads the event by its key (company, id).
   SELECT ${enqueueJobSql(JobTasks.FanOutEvent, { companyId: '$2::uuid', eventId: 'event.id' })}
     FROM event`;

/** The outbox. Every method takes the company id first. */
@Injectable()
export class EventsRepository {
  constructor(private readonly txHost: TransactionHost<TypeOrmTransactionalAdapter>) {}

  /**
   * Records that a document was created and enqueues its delivery, in the caller's transaction:
   * the event exists if and only if the document does, and a replay (which runs nothing) emits
   * nothing. One statement; the job key makes a second enqueue of the same event a no-op.
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
    const id = randomUUID();
    await this.txHost.tx.query(APPEND_EVENT_SQL, [
      id,
      companyId,
      type,
      JSON.stringify({ object }),
      occurredAt,
    ]);
    return id;
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
    const rows = await this.txHost.tx.query<EventRow[]>(
      `SELECT id, type, data, created_at FROM events WHERE company_id = $1 AND id = $2`,
      [companyId, eventId],
    );
    return rows[0] ? toView(rows[0]) : null;
  }
}
