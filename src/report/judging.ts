import type { ReportMark, ReportView } from '../records/index.js';
import { redactedPath, redactedText } from '../requests/index.js';
import { carriesSecret } from '../shared/index.js';
import type { BatchReads } from './batch-reads.js';
import type { Observed } from './observed.js';

// What judging a request (judge-request.ts) and judging its operation (judge-operation.ts) share.

/** Slack on Retry-After and on waits between reads, for clocks and timers (real ms). */
export const RETRY_AFTER_SLACK_MS = 100;

/**
 * What judging a request reads besides the request and the report: the store (through
 * its batch's reads), and whether the sandbox runs a manual clock. On a manual clock a
 * test moves the sandbox's time where a client's timers would wait (its timers driven by
 * the test), so a wait of Retry-After counts in sandbox time too; on a real clock, at
 * any speed, only real time counts, as the client's timers run on it.
 */
export interface Judging {
  reads: BatchReads;
  manualClock: boolean;
  /**
   * The client's creates and tracking reads judged just before this request, oldest
   * first (a few): a retry that closed before the request it retries (sent once the
   * client gave up on a hung one, say) was judged first.
   */
  recent: readonly Judged[];
  /**
   * This replica's id: a mark names the replica and the arrival number of the request that
   * set it (`origin`), so that a request is judged only against marks of requests that
   * arrived before it, where that is known (on its own replica: replicas' clocks differ).
   */
  replica: string;
  /**
   * When the answer of the request a mark's origin names went out, on this replica: 'waiting'
   * while it waits for its marks, undefined when not known here (see AnswersOut).
   */
  answeredAt?: (origin: string) => number | 'waiting' | undefined;
}

/** A request as judged, with when it arrived in real time (epoch ms). */
export interface Judged {
  kept: Observed;
  wall: number;
}

/** The mark at `key`, when the request that set it arrived before the one of arrival number `seq` (unknown, so taken, for another replica's). */
export function markBefore(judging: Judging, marks: ReportView['marks'], key: string, seq: number): ReportMark | undefined {
  const mark = marks[key];
  const [replica, of] = mark?.origin?.split(':') ?? [];
  return mark !== undefined && (replica !== judging.replica || Number(of) <= seq) ? mark : undefined;
}

/**
 * The first of a create's order codes (one a line) as events show it: the client's tokens
 * in it redacted (before the cut, so none is cut in two), cut at 64 characters, quoted (a
 * code is the client's own text: `X) → 201` would read as another answer).
 */
export function shownCode(codes: string | null | undefined, secrets: readonly string[] = []): string | undefined {
  const code = codes?.split('\n', 1)[0];
  if (code === undefined) return undefined;
  const first = carriesSecret(code, secrets) ? redactedText(code, secrets) : code;
  return JSON.stringify(first.length <= 64 ? first : `${first.slice(0, 64)}…`);
}

/**
 * A request as its events name it: method, path (cut at 200 characters: every event keeps
 * its note), a create's first order code (which of the client's creates it was), and answer.
 */
export function describe({ served, secrets, codes, items }: Pick<Observed, 'served' | 'secrets' | 'codes' | 'items'>): string {
  const shownPath = redactedPath(served.input.path, secrets);
  const path = shownPath.length <= 200 ? shownPath : `${shownPath.slice(0, 200)}…`;
  const first = shownCode(codes, secrets);
  const named = first === undefined ? '' : ` (order code ${first}${items > 1 ? ` and ${items - 1} more items` : ''})`;
  return `${served.method} ${path}${named} → ${served.status ?? 'no answer'}`;
}
