import { Conflict } from '../../shared/index.js';
import { applyReportChange, emptyReport, type ReportChange, type ReportEvent, type ReportRun, type ReportState } from '../../records/index.js';
import type { ReportRepository } from '../port.js';
import type { Db } from './db.js';

/** How often a change is tried again when another replica changed the report meanwhile. */
const ATTEMPTS = 8;

/** Adds the events $2 (a JSON array) of client $1 (the start of a statement: conditions may follow). */
const ADD_EVENTS = 'INSERT INTO report_events (client_id, event) SELECT $1, e FROM jsonb_array_elements($2::jsonb) AS e WHERE true';
/**
 * Drops client $1's events beyond the newest $3 of those from before the statement (an
 * index range, not a scan): with $3 the bound less the events the statement adds (which
 * its DELETE does not see), the newest `size` stay.
 */
const DROP_EVENTS = 'DELETE FROM report_events WHERE client_id = $1 AND id <= (SELECT id FROM report_events WHERE client_id = $1 ORDER BY id DESC OFFSET $3 LIMIT 1)';

/**
 * The readiness reports on PostgreSQL: one row per client with the counts, marks and
 * checks, changed with a version check, and the event log as rows of `report_events`
 * (the newest `size` per client), so a request's observation writes a small row and
 * an insert, not the whole log.
 */
export class PgReports implements ReportRepository {
  /**
   * The row each client's report was last read as, by `get`: the first try of the change
   * that follows it (an observation reads, judges, then changes) starts from it instead of
   * reading again; the version check still catches a change made meanwhile.
   */
  private readonly lastRead = new Map<string, { state: ReportState; version: number }>();

  constructor(
    private readonly db: () => Db,
    readonly size: number,
  ) {}

  async get(clientId: string, options: { events?: boolean } = {}): Promise<ReportState> {
    const found = await this.read(clientId);
    if (found) this.remember(clientId, found);
    const state = found?.state ?? emptyReport(clientId);
    if (options.events === false) return { ...state, events: [] };
    const { rows } = await this.db().query<{ event: ReportEvent }>(
      'SELECT event FROM (SELECT id, event FROM report_events WHERE client_id = $1 ORDER BY id DESC LIMIT $2) AS newest ORDER BY id',
      [clientId, this.size],
    );
    // Events an older replica kept in the state come before those in rows.
    const events = [...(state.events ?? []), ...rows.map((row) => row.event)];
    return { ...state, events: events.slice(Math.max(0, events.length - this.size)) };
  }

  async change(clientId: string, change: ReportChange): Promise<void> {
    const { events = [], ...rest } = change;
    // The events go with the state's change when there is one (one statement), else alone.
    if (Object.keys(rest).length > 0 && (await this.changeState(clientId, rest, events))) return;
    if (events.length === 0) return;
    await this.db().query(`WITH added AS (${ADD_EVENTS}) ${DROP_EVENTS}`, [clientId, JSON.stringify(events), Math.max(0, this.size - events.length)]);
  }

  async start(clientId: string, run: ReportRun | null): Promise<void> {
    this.lastRead.delete(clientId);
    await this.db().query('DELETE FROM report_events WHERE client_id = $1', [clientId]);
    await this.db().query(
      'INSERT INTO readiness_reports (client_id, version, state) VALUES ($1, 1, $2) ON CONFLICT (client_id) DO UPDATE SET state = EXCLUDED.state, version = readiness_reports.version + 1',
      [clientId, emptyReport(clientId, run)],
    );
  }

  async clear(clientId: string): Promise<number> {
    this.lastRead.delete(clientId);
    await this.db().query('DELETE FROM report_events WHERE client_id = $1', [clientId]);
    const { rowCount } = await this.db().query('DELETE FROM readiness_reports WHERE client_id = $1', [clientId]);
    return rowCount ?? 0;
  }

  /**
   * Applies counts, marks and checks to the report's row (with a version check, tried again
   * when another replica changed it). Answers whether `events` were added with it: they
   * are when the row was there to change (in the same statement, only if the version
   * matched).
   */
  private async changeState(clientId: string, change: ReportChange, events: ReportEvent[]): Promise<boolean> {
    let known = this.lastRead.get(clientId);
    this.lastRead.delete(clientId);
    for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
      const found = known ?? (await this.read(clientId));
      known = undefined;
      const next = applyReportChange(found?.state ?? emptyReport(clientId), change, this.size);
      if (found && events.length > 0) {
        const { rows } = await this.db().query<{ changed: number }>(
          `WITH changed AS (UPDATE readiness_reports SET state = $4, version = version + 1 WHERE client_id = $1 AND version = $5 RETURNING 1),
             added AS (${ADD_EVENTS} AND EXISTS (SELECT 1 FROM changed)),
             dropped AS (${DROP_EVENTS} AND EXISTS (SELECT 1 FROM changed))
           SELECT count(*)::integer AS changed FROM changed`,
          [clientId, JSON.stringify(events), Math.max(0, this.size - events.length), next, found.version],
        );
        if (rows[0]?.changed === 1) return true;
      } else if (found) {
        const { rowCount } = await this.db().query('UPDATE readiness_reports SET state = $2, version = version + 1 WHERE client_id = $1 AND version = $3', [clientId, next, found.version]);
        if (rowCount === 1) return false;
      } else {
        const { rowCount } = await this.db().query('INSERT INTO readiness_reports (client_id, version, state) VALUES ($1, 1, $2) ON CONFLICT DO NOTHING', [clientId, next]);
        if (rowCount === 1) return false;
      }
    }
    throw new Conflict(`The readiness report of client ${clientId} kept changing under this change.`);
  }

  private remember(clientId: string, found: { state: ReportState; version: number }): void {
    // Bounded: clients read and never changed do not pile up.
    if (this.lastRead.size >= 1_000) this.lastRead.clear();
    this.lastRead.set(clientId, found);
  }

  private async read(clientId: string): Promise<{ state: ReportState; version: number } | undefined> {
    const { rows } = await this.db().query<{ state: ReportState; version: number }>('SELECT state, version FROM readiness_reports WHERE client_id = $1', [clientId]);
    return rows[0];
  }
}
