import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  Propagation,
  Transactional,
  TransactionHost,
  type TypeOrmTransactionalAdapter,
  afterCursorSql,
  orderBySql,
  pageOf,
} from '@ledgerkey/database';
import type { EventType, EventView } from './event.view';
import { Task } from './job-queue';

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

/** The outbox. Every method takes the company id first. */
/** Keyset order of the list; ends in a unique column. */
const EVENTS_ORDER = ['xid', 'seq'];

@Injectable()
export class EventsRepository {
  constructor(private readonly txHost: TransactionHost<TypeOrmTransactionalAdapter>) {}

  /**
   * Records that a document was created and enqueues its delivery, in the caller's transaction:
   * the event exists if and only if the document does, and a replay (which runs nothing) emits
   * nothing. One statement; the job key makes a second enqueue of the same event a no-op.
   */
  @Transactional(Propagation.Mandatory)
  async append(companyId: string, type: EventType, object: { createdAt: string }): Promise<string> {
    const id = randomUUID();
    await this.txHost.tx.query(
      `WITH event AS (
         INSERT INTO events (id, company_id, type, data, created_at) VALUES ($1, $2, $3, $4, $5)
         RETURNING id
       )
       SELECT graphile_worker.add_job($6, json_build_object('eventId', event.id),
                                      job_key := 'fan_out:' || event.id)
         FROM event`,
      [id, companyId, type, JSON.stringify({ object }), object.createdAt, Task.FanOutEvent],
    );
    return id;
  }

  /**
   * Events in commit order, after `startingAfter`. Ordered by writing transaction, and only
   * events of transactions older than every transaction still running are shown: an event
   * that commits later can never sort before one a client has already seen, so paging with
   * `startingAfter` never skips an event.
   */
  async list(
    companyId: string,
    limit: number,
    startingAfter?: string,
  ): Promise<{ data: EventView[]; hasMore: boolean }> {
    const rows = await this.txHost.tx.query<EventRow[]>(
      `SELECT e.id, e.type, e.data, e.created_at
         FROM events e
        WHERE e.company_id = $1
          AND e.xid < pg_snapshot_xmin(pg_current_snapshot())
          AND ${afterCursorSql('events', 'e', EVENTS_ORDER, 2)}
        ${orderBySql('e', EVENTS_ORDER)}
        LIMIT $3`,
      [companyId, startingAfter ?? null, limit + 1],
    );
    return pageOf(rows, limit, toView);
  }

  async findById(companyId: string, eventId: string): Promise<EventView | null> {
    const rows = await this.txHost.tx.query<EventRow[]>(
      `SELECT id, type, data, created_at FROM events WHERE company_id = $1 AND id = $2`,
      [companyId, eventId],
    );
    return rows[0] ? toView(rows[0]) : null;
  }
}
