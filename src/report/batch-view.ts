import { applyMarks, type ReportMark, type ReportView } from '../records/index.js';

/**
 * The report a batch's observations are judged against: each against the marks the ones
 * before it in the batch left, as the store will keep them (their bound included). The
 * view the store gave is never changed: its marks are copied once, and only when an
 * observation is judged after one that set or removed marks. A batch of one (most are, on
 * a client whose answers wait for their marks) copies nothing. A client keeps up to
 * MARKS_KEPT marks (a poller of many orders keeps one per AWB), and a copy of them per
 * observation cost more than judging it.
 */
export class BatchView {
  #view: ReportView;
  /** The working copy of the marks, once one was needed. */
  #marks: Record<string, ReportMark> | undefined;
  #held = 0;
  /** The last observation's marks, not applied yet. */
  #unapplied: Readonly<Record<string, ReportMark | null>> | undefined;

  constructor(view: ReportView) {
    this.#view = view;
  }

  /** The report for the next observation. */
  get current(): ReportView {
    const changes = this.#unapplied;
    if (changes === undefined) return this.#view;
    this.#unapplied = undefined;
    if (this.#marks === undefined) {
      this.#marks = { ...this.#view.marks };
      this.#held = Object.keys(this.#marks).length;
      this.#view = { ...this.#view, marks: this.#marks };
    }
    this.#held = applyMarks(this.#marks, changes, this.#held);
    return this.#view;
  }

  /** What an observation set and removed, for those after it. */
  marked(changes: Readonly<Record<string, ReportMark | null>>): void {
    if (Object.keys(changes).length === 0) return;
    if (this.#unapplied !== undefined) void this.current;
    this.#unapplied = changes;
  }
}
