import { isDeepStrictEqual } from 'node:util';
import { RuleViolation, globMatches, globProblem, isFieldPath, unreadHeader, valueAt, type FieldError } from '../shared/index.js';
import type { JournalEntry } from '../records/index.js';

/**
 * What `POST /__sandbox/requests/count` counts: journal entries that meet every criterion
 * given (none given: every entry). The criteria of a fault rule's match, plus the status
 * the request was answered with, as WireMock's request pattern has.
 *
 * @example { method: 'POST', path: '/v1/order', status: 200, body: { 'items[0].cod': '1' } }
 */
export interface RequestMatch {
  method?: string;
  /** A path glob, as fault rules take it: `/v1/order/tracking/*`. */
  path?: string;
  operation_id?: string;
  status?: number;
  /** Header name (any case) → the exact value it had. */
  headers?: Record<string, string>;
  /** Field path of the JSON body → the JSON value it equalled. */
  body?: Record<string, unknown>;
}

/** Checks what the schema cannot: the path glob, the body's field paths and header names no request carries. Throws a 400 naming each field. */
export function checkRequestMatch(match: RequestMatch): RequestMatch {
  const errors: FieldError[] = [];
  const problem = match.path === undefined ? undefined : globProblem(match.path);
  if (problem) errors.push({ field: 'path', message: problem });
  for (const key of Object.keys(match.body ?? {})) {
    if (!isFieldPath(key)) errors.push({ field: `body.${key}`, message: 'each key must be a field path such as items[0].cod' });
  }
  for (const name of Object.keys(match.headers ?? {})) {
    const unread = unreadHeader(name);
    if (unread) errors.push({ field: `headers.${name}`, message: unread });
  }
  if (errors.length > 0) throw new RuleViolation(errors, 'The request match is not valid; see errors.');
  return match;
}

/** The match as one test of an entry, its criteria listed once (not at each entry). */
function matcher(match: RequestMatch): (entry: JournalEntry) => boolean {
  const method = match.method?.toUpperCase();
  const headers = Object.entries(match.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value] as const);
  const body = Object.entries(match.body ?? {});
  return (entry) => {
    if (method !== undefined && method !== entry.method.toUpperCase()) return false;
    if (match.operation_id !== undefined && match.operation_id !== entry.operation_id) return false;
    if (match.status !== undefined && match.status !== entry.status) return false;
    if (match.path !== undefined && !globMatches(match.path, entry.path)) return false;
    for (const [name, value] of headers) if (entry.headers[name] !== value) return false;
    // A body above the journal's limit is kept as an excerpt of its text: no field path reaches into it.
    for (const [path, value] of body) if (!isDeepStrictEqual(valueAt(entry.body, path), value)) return false;
    return true;
  };
}

/** How many of the entries meet the match. */
export function countMatching(entries: readonly JournalEntry[], match: RequestMatch): number {
  const matches = matcher(match);
  let count = 0;
  for (const entry of entries) if (matches(entry)) count += 1;
  return count;
}
