import { isDeepStrictEqual } from 'node:util';
import type { OperationInput } from '../http/handler.js';
import type { FaultMatch } from './types.js';

/** Whether one path segment matches a segment glob (`*` any run, `?` one character), without backtracking blow-ups. */
function segmentMatches(glob: string, text: string): boolean {
  let g = 0;
  let t = 0;
  let star = -1;
  let mark = 0;
  while (t < text.length) {
    if (g < glob.length && (glob[g] === '?' || glob[g] === text[t])) {
      g += 1;
      t += 1;
    } else if (g < glob.length && glob[g] === '*') {
      star = g++;
      mark = t;
    } else if (star >= 0) {
      g = star + 1;
      t = ++mark;
    } else return false;
  }
  while (glob[g] === '*') g += 1;
  return g === glob.length;
}

/**
 * Whether a request path matches a path glob: `*` matches within one segment, `?` one
 * character, a segment `**` any number of segments; everything else is literal. A
 * trailing slash on the path is ignored. Matching is linear in segments, so no glob a
 * client sends can stall the server (a regular expression could backtrack for ages).
 *
 * @example globMatches('/v1/order/tracking/*', '/v1/order/tracking/SBX1') // true
 */
export function globMatches(glob: string, path: string): boolean {
  const globs = glob.split('/').map((segment) => (segment.includes('**') && segment !== '**' ? segment.replace(/\*+/g, '*') : segment));
  const parts = (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).split('/');
  // reachable[j]: the globs so far can match the first j path segments.
  let reachable = parts.map((_, j) => j === 0);
  reachable.push(false);
  for (const segment of globs) {
    const next = new Array<boolean>(parts.length + 1).fill(false);
    if (segment === '**') {
      const first = reachable.indexOf(true);
      if (first >= 0) next.fill(true, first);
    } else {
      for (let j = 0; j < parts.length; j += 1) if (reachable[j] && segmentMatches(segment, parts[j]!)) next[j + 1] = true;
    }
    reachable = next;
  }
  return reachable[parts.length] === true;
}

const FIELD_PATH = /^[^.[\]]+(\.[^.[\]]+|\[\d+\])*$/;

/** Whether a body predicate key is a field path such as `items[0].cod`. */
export const isFieldPath = (path: string): boolean => FIELD_PATH.test(path);

/** The value at a field path (`items[0].cod`) of a JSON value, or undefined. */
export function valueAt(value: unknown, path: string): unknown {
  let node = value;
  for (const [, key, index] of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key ?? index!];
  }
  return node;
}

/** Whether a request meets every criterion of a rule's match. */
export function matches(match: FaultMatch, input: OperationInput): boolean {
  if (match.method !== undefined && match.method.toUpperCase() !== input.method.toUpperCase()) return false;
  if (match.operation_id !== undefined && match.operation_id !== input.operation.operationId) return false;
  if (match.path !== undefined && !globMatches(match.path, input.path)) return false;
  for (const [name, value] of Object.entries(match.headers ?? {})) {
    if (input.headers[name.toLowerCase()] !== value) return false;
  }
  for (const [path, value] of Object.entries(match.body ?? {})) {
    if (!isDeepStrictEqual(valueAt(input.body, path), value)) return false;
  }
  return true;
}
