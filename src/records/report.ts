/**
 * What the sandbox keeps per client for its readiness report (through the storage
 * port's `reports` repository): counts per catalogue item, small marks that later
 * requests are judged against, the answers of the last checks, and a bounded log of
 * the events behind the counts. Counts are never derived from the log, so dropping
 * old events never flips an item.
 */

/** The readiness run a Pact verification's provider states start: its traffic is Pact's, not the client's. */
export const PACT_RUN = 'pact';

/** A named run (`POST /__sandbox/runs`): the report covers the client's traffic since it started. */
export interface ReportRun {
  name: string;
  /** Sandbox-clock epoch ms. */
  started_at: number;
  /** Wall-clock epoch ms of the start: a request that arrived before it is not judged in the run, though it closed after (absent in runs started before it was kept). */
  started_wall?: number;
}

/** What a client's next request is judged against, e.g. the 503 it was answered. */
export interface ReportMark {
  /** Sandbox-clock epoch ms. */
  at: number;
  /** Wall-clock epoch ms. */
  wall: number;
  /** What the mark is about, e.g. `createOrder`, an AWB, a request's fingerprint. */
  detail: Record<string, string | number | null>;
  /** The replica and the arrival number there of the request that set it, `<replica>:<n>` (absent in marks kept before it was). */
  origin?: string;
}

/** One thing the report saw, for the log beside the counts. */
export interface ReportEvent {
  /** Sandbox-clock epoch ms. */
  at: number;
  item: string;
  outcome: ReportOutcome;
  note: string;
}

export type ReportOutcome = 'exercised' | 'handled' | 'missed';

export type CheckStatus = 'passed' | 'failed' | 'not_run';

/** The answer of one step of `POST /__sandbox/checks`. */
export interface CheckResult {
  id: string;
  /** The endpoint the step was sent to (`default` or `ep_...`); absent in results kept before the checks named it. */
  endpoint_id?: string;
  status: CheckStatus;
  expected: string;
  got: string | null;
  /** Sandbox-clock epoch ms. */
  at: number;
}

export interface ReportState {
  client_id: string;
  run: ReportRun | null;
  /** `<item>:<outcome>` → how many times. */
  counts: Record<string, number>;
  marks: Record<string, ReportMark>;
  checks: CheckResult[];
  /** Newest last, at most the repository's `size`. */
  events: ReportEvent[];
  /**
   * Missed events older than `events`, oldest first: each item's last MISSED_KEPT missed
   * events are kept however far the log moved on, so a failure keeps its examples.
   */
  missed: ReportEvent[];
}

/**
 * A client's report as a repository gives it: read-only. It may be a live view of
 * what the store keeps (the embedded store hands out its own state, so no request pays
 * for a copy of a thousand events): never change it, and copy what must outlast the
 * next change.
 */
export interface ReportView {
  readonly client_id: string;
  readonly run: Readonly<ReportRun> | null;
  readonly counts: Readonly<Record<string, number>>;
  readonly marks: Readonly<Record<string, Readonly<ReportMark>>>;
  readonly checks: readonly CheckResult[];
  readonly events: readonly ReportEvent[];
  readonly missed: readonly ReportEvent[];
}

/**
 * A change to a client's report, applied as one step. The repository takes its objects
 * as they are (the events, marks and checks may be kept as given): don't change them after.
 */
export interface ReportChange {
  /** Added to the counts. */
  counts?: Record<string, number>;
  /** Set (a mark) or removed (null). */
  marks?: Record<string, ReportMark | null>;
  events?: ReportEvent[];
  /** Replaces the checks. */
  checks?: CheckResult[];
}

/**
 * Most marks kept per client: the oldest go first (a mark only matters to the next few
 * requests), those of requests still waiting for their retry after them (each counts as
 * missed while it waits: dropped early, a flood of other marks would hide it), and the
 * run's own (RUN_MARKS, a few, and the receivers' marks of RUN_MARK_PREFIXES, two for each
 * receiver the report remembers) last of all.
 */
export const MARKS_KEPT = 500;

/** Whether a mark is of a request waiting for its retry (see MARKS_KEPT). */
export const isWaitingRetry = (key: string, mark: ReportMark): boolean => key.startsWith('retry:') && mark.detail.heard !== 1;

/**
 * The marks of one receiver, a webhook endpoint of the client at one URL (named by the
 * report's judging), after this prefix: seen refusing a duplicate copy with a 4xx other than
 * 408 or 429 (a webhook-id it has seen). They hold for the whole run, for the receivers seen
 * last (the report's judging bounds how many).
 */
export const SEEN_ID_REFUSED = 'webhook:seen-id-refused:';

/** As SEEN_ID_REFUSED, of a receiver seen acknowledging a duplicate copy with a 2xx. */
export const SEEN_ID_ACKNOWLEDGED = 'webhook:seen-id-acknowledged:';

/** Set once a create waited for its retry: from then on the run's creates are compared as the provider reads them (see the report's judging). It holds for the whole run. */
export const SAME_SEEN = 'same:createOrder';

/** Set once a create the client gave up on was carried out: from then on the run's creates' contents are hashed (see the report's judging). It holds for the whole run. */
export const CONTENT_SEEN = 'content:createOrder';

/** The marks that hold for the whole run: dropped last (see MARKS_KEPT), these keys and those of RUN_MARK_PREFIXES. */
export const RUN_MARKS: readonly string[] = [SAME_SEEN, CONTENT_SEEN];

/** The marks that hold for the whole run, one per receiver, by the start of their keys (no `%` or `_` in them: PostgreSQL matches them with LIKE). */
export const RUN_MARK_PREFIXES: readonly string[] = [SEEN_ID_REFUSED, SEEN_ID_ACKNOWLEDGED];

/** Whether a mark holds for the whole run (see MARKS_KEPT). */
export const isRunMark = (key: string): boolean => RUN_MARKS.includes(key) || RUN_MARK_PREFIXES.some((prefix) => key.startsWith(prefix));

/** In which order marks go (see MARKS_KEPT): others (0) first, then requests waiting for their retry (1), those of the run (2) last. */
const keptRank = (key: string, mark: ReportMark): 0 | 1 | 2 => (isRunMark(key) ? 2 : isWaitingRetry(key, mark) ? 1 : 0);

/** The keys to drop so that at most MARKS_KEPT stay, from keys oldest first: others first, then waiting retries, then the run's. */
export function marksBeyond(keys: Iterable<string>, marks: Readonly<Record<string, ReportMark>>): string[] {
  const ranks: [string[], string[], string[]] = [[], [], []];
  let n = 0;
  for (const key of keys) {
    ranks[keptRank(key, marks[key]!)].push(key);
    n += 1;
  }
  const over = n - MARKS_KEPT;
  if (over <= 0) return [];
  return ranks.flat().slice(0, over);
}

/**
 * Sets and removes `changes` in `marks` in place (a mark set again becomes the newest), then
 * drops the oldest beyond MARKS_KEPT as `marksBeyond` would, and answers how many are
 * left; `count` is how many `marks` held. Lets a working copy take many changes one at a
 * time (a batch's judging) for the price of one copy, not one copy per change.
 */
export function applyMarks(marks: Record<string, ReportMark>, changes: Readonly<Record<string, ReportMark | null>>, count: number): number {
  let n = count;
  for (const key in changes) {
    const mark = changes[key];
    if (Object.hasOwn(marks, key)) {
      delete marks[key];
      n -= 1;
    }
    if (!mark) continue;
    marks[key] = mark;
    n += 1;
  }
  for (; n > MARKS_KEPT; n -= 1) {
    const oldest: [string?, string?, string?] = [];
    for (const key in marks) {
      const rank = keptRank(key, marks[key]!);
      oldest[rank] ??= key;
      if (rank === 0) break;
    }
    delete marks[(oldest[0] ?? oldest[1] ?? oldest[2])!];
  }
  return n;
}

/** Most missed events kept per item once the log moved on (see ReportState.missed). */
export const MISSED_KEPT = 3;

export const emptyReport = (clientId: string, run: ReportRun | null = null): ReportState => ({ client_id: clientId, run, counts: {}, marks: {}, checks: [], events: [], missed: [] });

/** Of `older` (missed events that left the log, oldest first), each item's last ones that, with its missed events still in `log`, make at most MISSED_KEPT. */
export function missedKept(older: readonly ReportEvent[], log: readonly ReportEvent[]): ReportEvent[] {
  const room = new Map<string, number>();
  for (const event of log) if (event.outcome === 'missed') room.set(event.item, (room.get(event.item) ?? MISSED_KEPT) - 1);
  const kept: ReportEvent[] = [];
  for (let i = older.length - 1; i >= 0; i -= 1) {
    const event = older[i]!;
    const left = room.get(event.item) ?? MISSED_KEPT;
    if (left <= 0) continue;
    room.set(event.item, left - 1);
    kept.push(event);
  }
  return kept.reverse();
}

/** The state after `change`, with at most `size` events and `MARKS_KEPT` marks. Shared by every adapter. */
export function applyReportChange(state: ReportState, change: ReportChange, size: number): ReportState {
  const counts = { ...state.counts };
  for (const [key, n] of Object.entries(change.counts ?? {})) counts[key] = (counts[key] ?? 0) + n;
  const marks = { ...state.marks };
  applyMarks(marks, change.marks ?? {}, Object.keys(marks).length);
  const events = [...state.events, ...(change.events ?? [])];
  const cut = Math.max(0, events.length - size);
  const log = events.slice(cut);
  const missed = change.events?.length ? missedKept([...(state.missed ?? []), ...events.slice(0, cut).filter((e) => e.outcome === 'missed')], log) : (state.missed ?? []);
  return { ...state, counts, marks, checks: change.checks ?? state.checks, events: log, missed };
}

/** Most requests or attempts a not-handled item names: the last ones behind it. */
const SHOWN_EVENTS = 3;

/**
 * The events that explain why an item is not handled, as the JUnit and HTML reports and
 * the `report` command's gates show them: the last requests or attempts that missed it,
 * or, when none missed, the last that exercised it, with the heading that says which.
 *
 * @example lastEvents(report.events, 'fault.timeout') // { heading: 'Last missed:', events: [...] }
 */
export function lastEvents<E extends ReportEvent>(log: readonly E[], item: string): { heading: string; events: E[] } {
  const mine = log.filter((e) => e.item === item);
  const missed = mine.filter((e) => e.outcome === 'missed');
  const events = (missed.length > 0 ? missed : mine.filter((e) => e.outcome === 'exercised')).slice(-SHOWN_EVENTS);
  return { heading: missed.length > 0 ? 'Last missed:' : 'Last exercised (no handling seen after it):', events };
}
