/** What a repository runs its statements on: the pool, or a transaction's client. */
export interface Db {
  query<R>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
  /** Called when a statement scheduled a job of `clientId` due at `dueAt` (after commit, in a transaction). */
  scheduled(dueAt: number, clientId: string): void;
  /**
   * In a unit of work: holds a write whose outcome the caller does not wait for, to go
   * with the unit's next statement or its COMMIT (one round trip for several). Its
   * failure fails the unit (a record written first by another unit: a Conflict, and the
   * unit is tried again).
   */
  later?(text: string, values: unknown[]): void;
  /**
   * Outside a unit of work: runs `fn`, statements whose cost is the database's work over
   * many rows (a listing's count), in its client's turn of those (see LaneLimit). Absent:
   * run it as it is.
   */
  heavy?<T>(fn: () => Promise<T>): Promise<T>;
  /** In a unit of work: true the first time the unit writes an order of this batch (see PgOrders.insert). */
  newBatch?(batchId: string): boolean;
}

/** A write whose outcome nothing waits for: in a unit of work it goes with the unit's next statement or its COMMIT, else it is sent now. */
export async function write(db: Db, text: string, values: unknown[]): Promise<void> {
  if (db.later) db.later(text, values);
  else await db.query(text, values);
}

/**
 * The end of a held-back change of one row (after `WITH updated AS (... RETURNING 1)`):
 * a division by zero (STALE_VERSION) when no row was changed, which the unit of work
 * answers with a Conflict (see inOneTrip in unit-of-work.ts).
 */
export const ONE_ROW_OR_STALE = 'SELECT 1 / (SELECT count(*)::integer FROM updated)';
/** The SQLSTATE of ONE_ROW_OR_STALE's failure (division_by_zero). */
export const STALE_VERSION = '22012';

/** Whether a statement failed on a unique key another row holds (SQLSTATE unique_violation). */
export const isUniqueViolation = (error: unknown): boolean => (error as { code?: string }).code === '23505';
