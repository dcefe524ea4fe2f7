import { validateHeaderName, validateHeaderValue } from 'node:http';
import contentType from 'content-type';
import { refusedBodyValues } from './body-probe.js';
import { BODY_ENCODINGS, isTakenContentType, RuleViolation, globProblem, isFieldPath, operationsMeeting, retryAfterMs, unmatchableCriteria, unreadHeader, type FieldError, type MatchableOperation } from '../shared/index.js';
import { faultMessages } from './messages.js';
import type { FaultAction, FaultRuleInput } from '../records/index.js';

/** The fields each action type uses (the spec checks types and ranges; this checks the combination). */
const FIELDS: Record<FaultAction['type'], string[]> = {
  status: ['type', 'status', 'body', 'headers'],
  latency: ['type', 'ms', 'max_ms'],
  reset: ['type', 'after_ms'],
  hang: ['type'],
  dribble: ['type', 'bytes_per_second', 'interval_ms'],
};

/**
 * Headers that frame the answer or the connection (RFC 9110 §7.6.1, RFC 9112): node
 * writes them from the answer itself. Set by a rule, they would make node throw while
 * writing the answer (`Trailer` on an answer with a length) or send an answer whose
 * framing lies (`Transfer-Encoding` beside `Content-Length`), so that the next answer on
 * the connection became part of this one's body.
 */
const FRAMING_HEADERS = new Set(['connection', 'content-length', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/**
 * Headers that act on a browser rather than tell a client's HTTP code something: a
 * redirect its fetch follows with the same Authorization (a partner's rule once sent an
 * admin's dashboard to `POST /__sandbox/reset-all`), cookies and site data that outlive
 * the answer, and policies a browser keeps for the origin. A partner's rule would set
 * them on whoever reads its answers: its operator's dashboard too.
 */
const BROWSER_HEADERS = new Set([
  'location', 'refresh', 'set-cookie', 'set-cookie2', 'clear-site-data', 'content-security-policy', 'content-security-policy-report-only',
  'strict-transport-security', 'alt-svc', 'link', 'service-worker-allowed', 'cross-origin-opener-policy', 'cross-origin-embedder-policy', 'cross-origin-resource-policy',
  // Reporting policies a browser keeps for the origin, and where it files an answer.
  'nel', 'report-to', 'reporting-endpoints', 'content-location',
]);

/** Whether a fault rule's answer may not carry this header because it acts on the browser (see BROWSER_HEADERS; CORS's too). */
export const actsOnBrowser = (name: string): boolean => {
  const lower = name.toLowerCase();
  return BROWSER_HEADERS.has(lower) || lower.startsWith('access-control-');
};

/** Why a rule's answer cannot carry this header, or undefined when it can. */
function headerProblem(name: string, value: string): string | undefined {
  try {
    validateHeaderName(name);
    validateHeaderValue(name, value);
  } catch {
    return faultMessages.badHeader;
  }
  const lower = name.toLowerCase();
  if (FRAMING_HEADERS.has(lower)) return faultMessages.framingHeader(name);
  if (actsOnBrowser(lower)) return faultMessages.browserHeader(name);
  if (lower === 'retry-after' && retryAfterMs(value, 0) === undefined) return faultMessages.badRetryAfter;
  if (lower === 'content-type') {
    // Parsed again when the answer is sent (express): a value it cannot parse would throw there.
    try {
      contentType.parse(value);
    } catch {
      return faultMessages.badContentType;
    }
  }
  return undefined;
}

/**
 * Why every request whose header `name` has `value` is answered before any rule applies:
 * `always` (an Expect other than 100-continue is a 417 on every path; a Content-Length that
 * is no length, node's 400), or `bodied`: only for operations that need a body (a body in a
 * media type or an encoding the sandbox does not take, a 415; none at all, a 400; one over
 * `--body-limit`, a 413). Undefined when such a request can reach a rule.
 */
function edgeRefusal(name: string, value: string, limits: BodyLimit): { when: 'always' | 'bodied'; message: (operations: readonly string[]) => string } | undefined {
  const text = value.trim().toLowerCase();
  switch (name.toLowerCase()) {
    case 'expect':
      // As node reads it: an Expect that names 100-continue among others gets past it.
      return /(?:^|\W)100-continue(?:$|\W)/.test(text) ? undefined : { when: 'always', message: () => faultMessages.refusedExpect };
    case 'content-length':
      if (!/^\d+$/.test(text)) return { when: 'always', message: () => faultMessages.refusedLength };
      if (Number(text) === 0) return { when: 'bodied', message: faultMessages.refusedNoBody };
      return Number(text) > limits.bytes ? { when: 'bodied', message: (operations) => faultMessages.refusedTooLarge(operations, limits.text) } : undefined;
    case 'content-encoding':
      return BODY_ENCODINGS.has(text) ? undefined : { when: 'bodied', message: faultMessages.refusedEncoding };
    case 'content-type':
      return isTakenContentType(value) ? undefined : { when: 'bodied', message: faultMessages.refusedContentType };
    default:
      return undefined;
  }
}

/** The header criteria that no request reaching a rule meets (see edgeRefusal), each named. */
function refusedHeaders(headers: Record<string, string>, meeting: () => readonly MatchableOperation[], limits: BodyLimit): FieldError[] {
  const errors: FieldError[] = [];
  // --body-limit counts the body decoded: a compressed one's Content-Length may be above it and still be read.
  const compressed = Object.entries(headers).some(([name, value]) => name.toLowerCase() === 'content-encoding' && !['', 'identity'].includes(value.trim().toLowerCase()));
  const edgeLimits = compressed ? { ...limits, bytes: Infinity } : limits;
  for (const [name, value] of Object.entries(headers)) {
    try {
      validateHeaderName(name);
    } catch {
      errors.push({ field: `match.headers.${name}`, message: faultMessages.badMatchHeader });
      continue;
    }
    const unread = unreadHeader(name);
    if (unread) {
      errors.push({ field: `match.headers.${name}`, message: unread });
      continue;
    }
    // A request's header value arrives without the spaces around it, and a criterion is met exactly.
    if (value !== value.trim()) {
      errors.push({ field: `match.headers.${name}`, message: faultMessages.paddedHeader });
      continue;
    }
    const refusal = edgeRefusal(name, value, edgeLimits);
    if (!refusal) continue;
    const operations = meeting();
    if (refusal.when === 'always' || (operations.length > 0 && operations.every((op) => op.body === 'required'))) {
      errors.push({ field: `match.headers.${name}`, message: refusal.message(operations.map((op) => op.operationId)) });
    }
  }
  return errors;
}

/** The largest request body the sandbox reads (`--body-limit`), in bytes and as the operator wrote it. */
export interface BodyLimit {
  bytes: number;
  text: string;
}

/**
 * Checks what the schema cannot: fields that the action's type does not use, a
 * latency range the wrong way round, path globs and body field paths, and a match that
 * no request of the served spec (`operations`) can meet, or none that the edge lets through. Throws a 400 naming each field.
 */
export function checkRule(input: FaultRuleInput, operations: readonly MatchableOperation[] = [], limits: BodyLimit = { bytes: Infinity, text: 'none' }): FaultRuleInput {
  const errors: FieldError[] = [];
  const action = input.action as FaultAction & Record<string, unknown>;
  for (const key of Object.keys(action)) {
    if (!FIELDS[action.type].includes(key)) errors.push({ field: `action.${key}`, message: faultMessages.unusedField(action.type) });
  }
  if (action.type === 'latency' && action.max_ms !== undefined && action.max_ms < action.ms) {
    errors.push({ field: 'action.max_ms', message: faultMessages.maxBelowMin });
  }
  for (const [name, value] of Object.entries(action.type === 'status' ? (action.headers ?? {}) : {})) {
    const problem = headerProblem(name, value);
    if (problem) errors.push({ field: `action.headers.${name}`, message: problem });
  }
  const globIssue = input.match?.path === undefined ? undefined : globProblem(input.match.path);
  if (globIssue) errors.push({ field: 'match.path', message: globIssue });
  const criteria = { ...input.match, ...(globIssue ? { path: undefined } : {}) };
  const unmatchable = unmatchableCriteria(criteria, operations, 'match.');
  errors.push(...unmatchable);
  // Body criteria of operations none of which takes a body (a GET): no request has one to meet them.
  const meeting = unmatchable.length === 0 && Object.keys(input.match?.body ?? {}).length > 0 ? operationsMeeting(criteria, operations) : [];
  if (meeting.length > 0 && meeting.every((op) => op.body === 'none')) {
    errors.push({ field: 'match.body', message: faultMessages.noBody(meeting.map((op) => op.operationId)) });
  }
  const body = input.match?.body ?? {};
  for (const key of Object.keys(body)) {
    if (!isFieldPath(key)) errors.push({ field: `match.body.${key}`, message: faultMessages.badBodyPath });
  }
  // Values no request that passes validation has there (validation runs before any rule).
  if (unmatchable.length === 0 && Object.keys(body).length > 0 && Object.keys(body).every(isFieldPath)) {
    for (const refused of refusedBodyValues(body, operationsMeeting(criteria, operations))) {
      errors.push({ field: `match.body.${refused.path}`, message: faultMessages.refusedBodyValue(refused.operations, refused.problem) });
    }
  }
  // Headers whose requests the sandbox answers itself (a 415, a 417, a 413, a 400) before any rule applies.
  if (unmatchable.length === 0) errors.push(...refusedHeaders(input.match?.headers ?? {}, () => operationsMeeting(criteria, operations), limits));
  if (errors.length > 0) throw new RuleViolation(errors, faultMessages.invalidRule);
  return input;
}
