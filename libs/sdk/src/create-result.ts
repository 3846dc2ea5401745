/** What a `create` returns: the resource and what the key did. */
export interface CreateResult<T> {
  /** The created resource (or, on a replay, the one created by the first request). */
  data: T;
  /** `true` when the server replayed the stored answer of an earlier request with this key. */
  replayed: boolean;
  idempotencyKey: string;
  status: number;
  requestId: string | undefined;
  /** Until when a retry with this key replays (sent on first executions only). */
  keyExpiresAt: Date | undefined;
  /** Attempts this call made, the successful one included. */
  attempts: number;
}

/** Pagination every list takes: `limit`, one cursor, `order`. */
export interface ListQuery {
  limit?: number;
  /** The id of the last object of the previous page. */
  startingAfter?: string;
  /** The id of the first object of the next page: the page before it. */
  endingBefore?: string;
  /** `asc` (default): the list's natural order; `desc`: newest first. */
  order?: 'asc' | 'desc';
}
