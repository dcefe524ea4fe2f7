import { emptyReport, MARKS_KEPT, marksBeyond, MISSED_KEPT, type CheckResult, type ReportChange, type ReportEvent, type ReportMark, type ReportRun, type ReportView } from '../../records/index.js';
import type { ReportRepository } from '../port.js';
import { BoundedLog } from './bounded-log.js';

/**
 * One client's report as the embedded store keeps it, changed in place: counts add up
 * where they are, the events sit in a bounded log and the marks remember their order,
 * so a change costs what it adds, not a copy of the thousand events and five hundred
 * marks kept (it is applied on every request). The same rules as `applyReportChange`.
 */
class KeptReport implements ReportView {
  readonly counts: Record<string, number> = {};
  readonly marks: Record<string, ReportMark> = {};
  checks: readonly CheckResult[] = [];
  /** The marks' keys, oldest first. */
  readonly #markOrder = new Set<string>();
  readonly #events: BoundedLog<ReportEvent>;
  /** Events added so far: the log holds the last `size`. */
  #added = 0;
  /** Per item, its last MISSED_KEPT missed events, with their numbers among all added (see `missed`). */
  readonly #missed = new Map<string, Array<{ n: number; event: ReportEvent }>>();

  constructor(
    readonly client_id: string,
    readonly run: ReportRun | null,
    size: number,
  ) {
    this.#events = new BoundedLog(size);
  }

  /** Each item's last missed events that the log no longer holds, oldest first (see ReportState.missed). */
  get missed(): ReportEvent[] {
    const inLog = this.#added - this.#events.size;
    const older = [...this.#missed.values()].flat().filter((kept) => kept.n <= inLog);
    return older.sort((a, b) => a.n - b.n).map((kept) => kept.event);
  }

  /** The kept events, oldest first, as a new array (only a report read through the API asks). */
  get events(): ReportEvent[] {
    return this.#events.toArray();
  }

  apply(change: ReportChange): void {
    if (change.counts) for (const key in change.counts) this.counts[key] = (this.counts[key] ?? 0) + change.counts[key]!;
    if (change.marks) {
      for (const key in change.marks) {
        const mark = change.marks[key];
        // Set again, a mark becomes the newest.
        delete this.marks[key];
        this.#markOrder.delete(key);
        if (!mark) continue;
        this.marks[key] = mark;
        this.#markOrder.add(key);
      }
      if (this.#markOrder.size > MARKS_KEPT) {
        for (const key of marksBeyond(this.#markOrder, this.marks)) {
          this.#markOrder.delete(key);
          delete this.marks[key];
        }
      }
    }
    if (change.events) {
      for (const event of change.events) {
        this.#events.add(event);
        this.#added += 1;
        if (event.outcome !== 'missed') continue;
        const kept = this.#missed.get(event.item) ?? [];
        kept.push({ n: this.#added, event });
        if (kept.length > MISSED_KEPT) kept.shift();
        this.#missed.set(event.item, kept);
      }
    }
    if (change.checks) this.checks = change.checks;
  }
}

/**
 * The readiness reports of the embedded store: in memory, like the request journal
 * (written on every request; a restart clears them). `get` and `change` answer the kept
 * report itself, read-only and live (see `ReportView`).
 */
export class MemoryReports implements ReportRepository {
  private readonly byClient = new Map<string, KeptReport>();

  constructor(readonly size: number) {}

  async get(clientId: string): Promise<ReportView> {
    return this.byClient.get(clientId) ?? emptyReport(clientId);
  }

  async change(clientId: string, change: ReportChange): Promise<void> {
    let kept = this.byClient.get(clientId);
    if (!kept) {
      kept = new KeptReport(clientId, null, this.size);
      this.byClient.set(clientId, kept);
    }
    kept.apply(change);
  }

  async start(clientId: string, run: ReportRun | null): Promise<void> {
    this.byClient.set(clientId, new KeptReport(clientId, run, this.size));
  }

  async clear(clientId: string): Promise<number> {
    return this.byClient.delete(clientId) ? 1 : 0;
  }
}
