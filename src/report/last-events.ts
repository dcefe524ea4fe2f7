import type { Report } from './grade.js';

/** Most requests or attempts a not-handled item names: the last ones behind it. */
const SHOWN_EVENTS = 3;

/**
 * The events that explain why an item is not handled, as the JUnit and HTML reports show
 * them: the last requests or attempts that missed it, or, when none missed, the last that
 * exercised it, with the heading that says which.
 *
 * @example lastEvents(report, 'fault.timeout') // { heading: 'Last missed:', events: [...] }
 */
export function lastEvents(report: Report, item: string): { heading: string; events: Report['events'] } {
  const mine = report.events.filter((e) => e.item === item);
  const missed = mine.filter((e) => e.outcome === 'missed');
  const events = (missed.length > 0 ? missed : mine.filter((e) => e.outcome === 'exercised')).slice(-SHOWN_EVENTS);
  return { heading: missed.length > 0 ? 'Last missed:' : 'Last exercised (no handling seen after it):', events };
}
