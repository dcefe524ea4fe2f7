import type { CatalogueItem } from './catalogue.js';
import { coverageOf, type Coverage, type SpecOperation } from './operations.js';
import { isWaitingRetry, type CheckResult, type ReportEvent, type ReportOutcome, type ReportView } from '../records/index.js';

export type ItemStatus = 'handled' | 'not_handled' | 'not_exercised' | 'not_graded';

export interface GradedItem {
  id: string;
  title: string;
  status: ItemStatus;
  graded: boolean;
  sandbox_choice: boolean;
  exercised: number;
  handled: number;
  missed: number;
  /** Why, in a sentence. */
  detail: string;
  source: string;
  criteria: { exercised: string; handled: string };
}

export interface Report {
  client_id: string;
  run: { name: string; started_at: string } | null;
  generated_at: string;
  summary: { items: number; graded: number; handled: number; not_handled: number; not_exercised: number; not_graded: number; handled_percent: number };
  items: GradedItem[];
  /** Which operations of the provider spec, and which documented statuses, the run exercised. */
  coverage: Coverage;
  checks: CheckResult[];
  events: ReportEvent[];
}

const countOf = (state: ReportView, id: string, outcome: ReportOutcome): number => state.counts[`${id}:${outcome}`] ?? 0;

const CHECK_PREFIX = 'check.';

/** A check item is graded by the last `POST /__sandbox/checks`: a later run replaces an earlier one. */
function gradeCheck(item: CatalogueItem, state: ReportView): Pick<GradedItem, 'status' | 'exercised' | 'handled' | 'missed' | 'detail'> {
  const step = item.id.slice(CHECK_PREFIX.length).replaceAll('-', '_');
  const result = state.checks.find((c) => c.id === step);
  if (!result) return { status: 'not_exercised', exercised: 0, handled: 0, missed: 0, detail: 'Not run: POST /__sandbox/checks runs it.' };
  const at = result.endpoint_id === undefined ? '' : ` (endpoint ${result.endpoint_id})`;
  if (result.status === 'not_run') return { status: 'not_exercised', exercised: 0, handled: 0, missed: 0, detail: `Not run${at}: ${result.got?.replace(/^not run: /, '') ?? 'an earlier step got no answer'}.` };
  if (result.status === 'passed') return { status: 'handled', exercised: 1, handled: 1, missed: 0, detail: `Passed${at}: expected ${result.expected}, got ${result.got}.` };
  return { status: 'not_handled', exercised: 1, handled: 0, missed: 1, detail: `Failed${at}: expected ${result.expected}, got ${result.got}.` };
}

/**
 * How many requests that met the item's fault still wait for their retry (see judgeRequest's
 * retry marks): each is missed, for the report as it stands; its retry, when it comes, is judged then.
 */
function waitingRetries(state: ReportView, id: string): number {
  if (!id.startsWith('fault.')) return 0;
  const kind = id.slice('fault.'.length);
  let n = 0;
  for (const key in state.marks) if (isWaitingRetry(key, state.marks[key]!) && state.marks[key]!.detail.kind === kind) n += 1;
  return n;
}

/** `1 time`, `3 times`. */
const times = (n: number): string => `${n} time${n === 1 ? '' : 's'}`;

/** One item's status from its counts: any miss is not handled; a handled without a miss is handled. */
function gradeItem(item: CatalogueItem, state: ReportView): GradedItem {
  if (item.graded && item.id.startsWith(CHECK_PREFIX)) {
    return { id: item.id, title: item.title, graded: true, sandbox_choice: item.sandbox_choice, ...gradeCheck(item, state), source: item.source, criteria: { exercised: item.exercised, handled: item.handled } };
  }
  const exercised = countOf(state, item.id, 'exercised');
  // Never shown above exercised: two attempts of one delivery in flight at once (a retry and a redelivery) may each be its first acknowledgement.
  const handled = Math.min(countOf(state, item.id, 'handled'), exercised);
  const waiting = waitingRetries(state, item.id);
  // Never shown below 0 (a miss taken back twice, two replicas judging one acknowledgement at once; such a sum may also hide one other miss).
  const missed = Math.max(0, countOf(state, item.id, 'missed')) + waiting;
  let status: ItemStatus;
  let detail: string;
  if (!item.graded) [status, detail] = ['not_graded', 'The sandbox cannot observe this.'];
  else if (exercised === 0) [status, detail] = ['not_exercised', `Not exercised yet. Exercised when: ${item.exercised}`];
  else if (missed > 0) [status, detail] = ['not_handled', `Missed ${missed} of ${times(exercised)}${waiting > 0 ? ` (${waiting} not sent again)` : ''}. Handled when: ${item.handled}`];
  else if (handled > 0) [status, detail] = ['handled', `Handled (${handled} of ${exercised}).`];
  else [status, detail] = ['not_handled', `Exercised ${times(exercised)}; the handling is not seen yet. Handled when: ${item.handled}`];
  return { id: item.id, title: item.title, status, graded: item.graded, sandbox_choice: item.sandbox_choice, exercised, handled, missed, detail, source: item.source, criteria: { exercised: item.exercised, handled: item.handled } };
}

/**
 * The report of one client: every catalogue item graded, the handled share (handled /
 * graded), and the coverage of the provider spec's `operations`.
 */
export function gradeReport(items: CatalogueItem[], state: ReportView, now: number, operations: readonly SpecOperation[]): Report {
  const graded = items.map((item) => gradeItem(item, state));
  const count = (status: ItemStatus) => graded.filter((i) => i.status === status).length;
  const gradedCount = graded.filter((i) => i.graded).length;
  const handled = count('handled');
  return {
    client_id: state.client_id,
    run: state.run ? { name: state.run.name, started_at: new Date(state.run.started_at).toISOString() } : null,
    generated_at: new Date(now).toISOString(),
    summary: {
      items: graded.length,
      graded: gradedCount,
      handled,
      not_handled: count('not_handled'),
      not_exercised: count('not_exercised'),
      not_graded: count('not_graded'),
      handled_percent: gradedCount === 0 ? 0 : Math.round((handled / gradedCount) * 10_000) / 100,
    },
    items: graded,
    coverage: coverageOf(operations, state.counts),
    // Copies: the view may be the store's own, live state.
    checks: [...state.checks],
    // Each item's last missed events that the log has left behind first: a failure keeps its examples.
    events: [...state.missed, ...state.events],
  };
}
