import { randomUUID } from 'node:crypto';
import { applyReportChange, emptyReport, MARKS_KEPT, MISSED_KEPT, RUN_MARK_PREFIXES, RUN_MARKS, type ReportChange, type ReportEvent, type ReportMark, type ReportRun, type ReportState } from '../../records/index.js';
import type { ReportRepository } from '../port.js';
import type { Db } from './db.js';
import { BATCH_INTERVAL_MS, IntervalBatches } from './interval-batch.js';
import { storable, storableJson, withoutNul } from './rows.js';

/** How often, at most, the background trim of events and marks runs. */
const TRIM_MS = 1_000;
/** Most observations' counts and events held before they are written without waiting for the interval. */
const HELD_MOST = 512;
/** Most clients whose report (without counts and events) a replica keeps at hand (see `marksOf`). */
const KEPT_CLIENTS = 64;
/**
 * Longest a report is kept at hand before it is read whole again, however its version
 * stands (wall ms): an older replica in a rolling upgrade trims marks without moving the
 * version, and what it dropped is then judged against no longer than this.
 */
const KEPT_MS = 5_000;

/** A client's report without counts and events as this replica last read or wrote it, and which row it is of. */
interface Kept {
  version: number;
  born: string;
  state: ReportState;
  /** When it was read whole (Date.now()). */
  readAt: number;
}

/** What one change adds: counts and events, held for the next batch. */
interface Added {
  clientId: string;
  counts: Record<string, number>;
  events: ReportEvent[];
}

/**
 * The readiness reports on PostgreSQL, written so that replicas never contend:
 *
 * - counts are rows of `report_counts` (client, item, n), added to with
 *   `ON CONFLICT … DO UPDATE SET n = n + excluded.n`, and the events rows of
 *   `report_events`: a replica holds both for a short interval (BATCH_INTERVAL_MS) and
 *   writes every client's in one statement; a read of the counts or the events through
 *   this replica first writes what it holds (read your own writes);
 * - marks and checks stay in the client's `readiness_reports` row, changed at once by
 *   one statement that merges them into the row as it is (no version to check, so no
 *   change is ever refused because another replica changed the row first);
 * - events beyond the newest `size` and marks beyond MARKS_KEPT are dropped in the
 *   background (a read shows the newest `size` events meanwhile).
 *
 * Counts a version before kept in the row's state (and an older replica in a rolling
 * upgrade still adds there) are read together with the rows.
 */
export class PgReports implements ReportRepository {
  private readonly batches: IntervalBatches<Added>;
  /** Clients whose events or marks were written since the last trim. */
  private readonly untrimmed = new Set<string>();
  private lastTrim = 0;
  private trimming: Promise<void> | undefined;
  /** Per client, its report without counts and events, while the row is still the one it was read or written from (see `marksOf`), least recently used first. */
  private readonly kept = new Map<string, Kept>();

  constructor(
    private readonly db: () => Db,
    readonly size: number,
    intervalMs = BATCH_INTERVAL_MS,
  ) {
    this.batches = new IntervalBatches((batch) => this.write(batch), { intervalMs, most: HELD_MOST });
  }

  /** The report; its counts and events after what this replica holds is written. `counts: false` leaves the counts out (judging a request reads only marks). */
  async get(clientId: string, options: { events?: boolean; counts?: boolean } = {}): Promise<ReportState> {
    const events = options.events !== false;
    const counts = options.counts !== false;
    if (!events && !counts) return this.marksOf(clientId);
    await this.batches.flush();
    // The missed events kept beyond the newest `size` (see ReportState.missed): each item's last MISSED_KEPT, older than the log's oldest.
    const { rows } = await this.db().query<{ state: ReportState | null; counts: Record<string, string> | null; events: ReportEvent[] | null; missed: ReportEvent[] | null }>(
      `SELECT (SELECT state FROM readiness_reports WHERE client_id = $1) AS state,
         CASE WHEN $3 THEN (SELECT jsonb_object_agg(key, n) FROM report_counts WHERE client_id = $1) END AS counts,
         CASE WHEN $2 > 0 THEN (SELECT jsonb_agg(event ORDER BY id) FROM (SELECT id, event FROM report_events WHERE client_id = $1 ORDER BY id DESC LIMIT $2) AS newest) END AS events,
         CASE WHEN $5 THEN (SELECT jsonb_agg(event ORDER BY id) FROM (
           SELECT id, event, row_number() OVER (PARTITION BY event->>'item' ORDER BY id DESC) AS n FROM report_events WHERE client_id = $1 AND event->>'outcome' = 'missed') AS last
           WHERE n <= $4 AND id < COALESCE((SELECT min(id) FROM (SELECT id FROM report_events WHERE client_id = $1 ORDER BY id DESC LIMIT $2) AS newest), 9223372036854775807)) END AS missed`,
      [clientId, events ? this.size : 0, counts, MISSED_KEPT, events],
    );
    const row = rows[0]!;
    const state = row.state ?? emptyReport(clientId);
    const merged = { ...(state.counts ?? {}) };
    for (const [key, n] of Object.entries(row.counts ?? {})) merged[key] = (merged[key] ?? 0) + Number(n);
    if (!events) return { ...state, counts: counts ? merged : {}, events: [], missed: [] };
    // Events an older replica kept in the state come before those in rows.
    const all = [...(state.events ?? []), ...(row.events ?? [])];
    return { ...state, counts: counts ? merged : {}, events: all.slice(Math.max(0, all.length - this.size)), missed: row.missed ?? [] };
  }

  /** Marks and checks are written at once; counts and events with the next batch. Resolves once all of it is written. */
  async change(clientId: string, change: ReportChange): Promise<void> {
    const { counts = {}, events = [], marks, checks } = change;
    const setting = marks !== undefined && Object.keys(marks).length > 0 ? this.setMarks(clientId, marks, checks) : checks !== undefined ? this.setMarks(clientId, {}, checks) : undefined;
    const adding = Object.keys(counts).length > 0 || events.length > 0 ? this.batches.add({ clientId, counts, events }) : undefined;
    await Promise.all([setting, adding]);
  }

  async start(clientId: string, run: ReportRun | null): Promise<void> {
    await this.batches.flush();
    this.kept.delete(clientId);
    await this.db().query(
      `WITH events AS (DELETE FROM report_events WHERE client_id = $1), counts AS (DELETE FROM report_counts WHERE client_id = $1)
       INSERT INTO readiness_reports (client_id, version, state, born) VALUES ($1, 1, $2, $3)
       ON CONFLICT (client_id) DO UPDATE SET state = EXCLUDED.state, version = readiness_reports.version + 1, born = COALESCE(readiness_reports.born, EXCLUDED.born)`,
      [clientId, storable(emptyReport(clientId, run)), randomUUID()],
    );
  }

  async clear(clientId: string): Promise<number> {
    await this.batches.flush();
    this.kept.delete(clientId);
    const { rows } = await this.db().query<{ n: number }>(
      `WITH events AS (DELETE FROM report_events WHERE client_id = $1 RETURNING 1), counts AS (DELETE FROM report_counts WHERE client_id = $1 RETURNING 1),
         reports AS (DELETE FROM readiness_reports WHERE client_id = $1 RETURNING 1)
       SELECT CASE WHEN EXISTS (SELECT 1 FROM reports) OR EXISTS (SELECT 1 FROM counts) OR EXISTS (SELECT 1 FROM events) THEN 1 ELSE 0 END AS n`,
      [clientId],
    );
    return rows[0]?.n ?? 0;
  }

  /** Resolves when nothing is held or being written (close waits for it). */
  async drained(): Promise<void> {
    await this.batches.drained();
    await this.trimming;
  }

  /**
   * Sets and removes marks (and replaces the checks, when given) in the row as it is
   * now, in one statement: the row's lock orders replicas' changes, none is refused.
   */
  private async setMarks(clientId: string, marks: NonNullable<ReportChange['marks']>, checks: ReportChange['checks']): Promise<void> {
    const set = storableJson(Object.fromEntries(Object.entries(marks).filter(([, mark]) => mark !== null)));
    const removed = Object.keys(marks).map(withoutNul);
    const fresh = applyReportChange(emptyReport(clientId), { marks, ...(checks ? { checks } : {}) }, 0);
    const { rows } = await this.db().query<{ version: number; born: string }>(
      `INSERT INTO readiness_reports (client_id, version, state, born) VALUES ($1, 1, $5, $6)
       ON CONFLICT (client_id) DO UPDATE SET version = readiness_reports.version + 1, born = COALESCE(readiness_reports.born, EXCLUDED.born),
         state = readiness_reports.state || jsonb_build_object(
           'marks', (COALESCE(readiness_reports.state->'marks', '{}'::jsonb) - $2::text[]) || $3::jsonb,
           'checks', COALESCE($4::jsonb, readiness_reports.state->'checks'))
       RETURNING version, born`,
      [clientId, removed, set, checks ? storableJson(checks) : null, storable(fresh), randomUUID()],
    );
    // What is kept at hand follows this change when nobody else changed the row since it was read (the version moved by this change alone).
    const kept = this.kept.get(clientId);
    const row = rows[0]!;
    if (kept && kept.born === row.born && kept.version + 1 === row.version) {
      kept.version = row.version;
      const keptMarks = kept.state.marks;
      for (const key of removed) delete keptMarks[key];
      Object.assign(keptMarks, JSON.parse(set) as Record<string, ReportMark>);
      if (checks) kept.state.checks = storable(checks);
    } else this.kept.delete(clientId);
    if (set !== '{}') this.trimSoon(clientId);
  }

  /**
   * The report without its counts and events (what judging a request reads): the one kept
   * at hand while the row is the one it was read or last written from (its `version`,
   * which every change moves, and its `born`, which a row created again does not share),
   * else read whole. A client's marks may be hundreds (a poller of many orders keeps one
   * per AWB): a batch of judgments then reads two numbers, not every mark.
   */
  private async marksOf(clientId: string): Promise<ReportState> {
    const held = this.kept.get(clientId);
    const kept = held && Date.now() - held.readAt < KEPT_MS ? held : undefined;
    const { rows } = await this.db().query<{ version: number; born: string | null; state: ReportState | null }>(
      'SELECT version, born, CASE WHEN version = $2 AND born = $3 THEN NULL ELSE state END AS state FROM readiness_reports WHERE client_id = $1',
      [clientId, kept?.version ?? -1, kept?.born ?? ''],
    );
    const row = rows[0];
    this.kept.delete(clientId);
    if (row === undefined) return emptyReport(clientId);
    if (row.state === null && kept) {
      this.kept.set(clientId, kept);
      return kept.state;
    }
    const state = { ...(row.state ?? emptyReport(clientId)), counts: {}, events: [], missed: [] };
    state.marks ??= {};
    if (row.born !== null) {
      this.kept.set(clientId, { version: row.version, born: row.born, state, readAt: Date.now() });
      if (this.kept.size > KEPT_CLIENTS) this.kept.delete(this.kept.keys().next().value!);
    }
    return state;
  }

  /**
   * One statement for the batch: every client's counts added to its rows (taken in
   * client and item order, so two replicas' batches never deadlock) and its events
   * appended, in the order they were made.
   */
  private async write(batch: Added[]): Promise<void> {
    const counts = new Map<string, number>();
    const events: Array<{ c: string; e: ReportEvent }> = [];
    for (const { clientId, counts: added, events: made } of batch) {
      for (const [key, n] of Object.entries(added)) {
        const at = JSON.stringify([clientId, key]);
        counts.set(at, (counts.get(at) ?? 0) + n);
      }
      for (const event of made) events.push({ c: clientId, e: event });
      if (made.length > 0) this.untrimmed.add(clientId);
    }
    const countRows = [...counts].map(([at, n]) => {
      const [c, k] = JSON.parse(at) as [string, string];
      return { c, k, n };
    });
    await this.db().query(
      `WITH counted AS (
         INSERT INTO report_counts (client_id, key, n)
         SELECT x->>'c', x->>'k', (x->>'n')::bigint FROM jsonb_array_elements($1::jsonb) AS x ORDER BY 1, 2
         ON CONFLICT (client_id, key) DO UPDATE SET n = report_counts.n + excluded.n
       )
       INSERT INTO report_events (client_id, event)
       SELECT x->>'c', x->'e' FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS t(x, i) ORDER BY i`,
      [storableJson(countRows), storableJson(events)],
    );
    this.trimSoon();
  }

  /** Starts the background trim when the last one is TRIM_MS old and none runs. */
  private trimSoon(clientId?: string): void {
    if (clientId !== undefined) this.untrimmed.add(clientId);
    if (this.trimming || this.untrimmed.size === 0 || Date.now() - this.lastTrim < TRIM_MS) return;
    this.lastTrim = Date.now();
    const clients = [...this.untrimmed];
    this.untrimmed.clear();
    // A failed trim is made good by a later one; reads show only the bound meanwhile.
    this.trimming = this.trim(clients)
      .catch(() => undefined)
      .finally(() => {
        this.trimming = undefined;
      });
  }

  /**
   * Drops each client's events beyond the newest `size` (an index range) but each item's
   * last MISSED_KEPT missed ones, and its oldest marks beyond MARKS_KEPT, waiting retries after the others and the run's (RUN_MARKS, RUN_MARK_PREFIXES) last (see MARKS_KEPT).
   */
  private async trim(clients: string[]): Promise<void> {
    await this.db().query(
      `WITH kept AS (
         SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY client_id, event->>'item' ORDER BY id DESC) AS n
                         FROM report_events WHERE client_id = ANY($1::text[]) AND event->>'outcome' = 'missed') AS last
         WHERE n <= $3)
       DELETE FROM report_events AS r
       USING (SELECT c.client_id, (SELECT id FROM report_events WHERE client_id = c.client_id ORDER BY id DESC OFFSET $2 LIMIT 1) AS bound
              FROM unnest($1::text[]) AS c(client_id)) AS b
       WHERE r.client_id = b.client_id AND r.id <= b.bound AND r.id NOT IN (SELECT id FROM kept)`,
      [clients, this.size, MISSED_KEPT],
    );
    await this.db().query(
      `UPDATE readiness_reports SET version = version + 1, state = jsonb_set(state, '{marks}',
         (SELECT COALESCE(jsonb_object_agg(key, value), '{}'::jsonb) FROM (SELECT key, value FROM jsonb_each(state->'marks') ORDER BY (key = ANY($3::text[]) OR key LIKE ANY($4::text[])) DESC, (key LIKE 'retry:%' AND value->'detail'->>'heard' IS DISTINCT FROM '1') DESC, (value->>'wall')::numeric DESC LIMIT $2) AS newest))
       WHERE client_id = ANY($1::text[]) AND (SELECT count(*) FROM jsonb_object_keys(state->'marks')) > $2`,
      [clients, MARKS_KEPT, RUN_MARKS, RUN_MARK_PREFIXES.map((prefix) => `${prefix}%`)],
    );
  }
}
