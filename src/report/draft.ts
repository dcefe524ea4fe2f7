import type { ReportChange, ReportMark, ReportOutcome } from '../records/index.js';

/** A change being put together: counts per item and outcome, marks, and the events behind them. */
export class Draft {
  readonly change: Required<Pick<ReportChange, 'counts' | 'marks' | 'events'>> = { counts: {}, marks: {}, events: [] };
  constructor(private readonly at: number) {}

  note(item: string, outcome: ReportOutcome, note: string): void {
    const key = `${item}:${outcome}`;
    this.change.counts[key] = (this.change.counts[key] ?? 0) + 1;
    this.change.events.push({ at: this.at, item, outcome, note });
  }

  /** Exercised, and handled or missed in the same breath. */
  judge(item: string, handled: boolean | undefined, note: string): void {
    this.note(item, 'exercised', note);
    if (handled !== undefined) this.note(item, handled ? 'handled' : 'missed', note);
  }

  /** One fewer of an item's outcome, without an event: a judgment taken back (a miss that turned out not to be one). */
  retract(item: string, outcome: ReportOutcome): void {
    const key = `${item}:${outcome}`;
    this.change.counts[key] = (this.change.counts[key] ?? 0) - 1;
  }

  /** One more of a tally kept without an event (the operations' coverage): a count, not a judgment. */
  count(key: string): void {
    this.change.counts[key] = (this.change.counts[key] ?? 0) + 1;
  }

  mark(key: string, mark: ReportMark | null): void {
    this.change.marks[key] = mark;
  }

  /** Another draft's change after this one's: counts added, marks set or removed, events appended. */
  add(change: Draft['change']): void {
    for (const [key, n] of Object.entries(change.counts)) this.change.counts[key] = (this.change.counts[key] ?? 0) + n;
    for (const [key, mark] of Object.entries(change.marks)) {
      delete this.change.marks[key]; // set again last: the order marks were made in
      this.change.marks[key] = mark;
    }
    this.change.events.push(...change.events);
  }

  get empty(): boolean {
    return this.change.events.length === 0 && Object.keys(this.change.marks).length === 0 && Object.keys(this.change.counts).length === 0;
  }
}
