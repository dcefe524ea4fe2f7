import { isDeepStrictEqual } from 'node:util';
import type { OperationInput } from '../http/handler.js';
import type { FaultMatch } from './types.js';

/**
 * A path glob as a regular expression: `*` matches within one segment, `**` across
 * segments, `?` one character; everything else is literal.
 *
 * @example globToRegExp('/v1/order/tracking/*').test('/v1/order/tracking/SBX1') // true
 */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      source += '.*';
      i++;
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}/?$`);
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
  const { req } = input.raw;
  if (match.method !== undefined && match.method.toUpperCase() !== req.method.toUpperCase()) return false;
  if (match.operation_id !== undefined && match.operation_id !== input.operation.operationId) return false;
  if (match.path !== undefined && !globToRegExp(match.path).test(req.path)) return false;
  for (const [name, value] of Object.entries(match.headers ?? {})) {
    if (input.headers[name.toLowerCase()] !== value) return false;
  }
  for (const [path, value] of Object.entries(match.body ?? {})) {
    if (!isDeepStrictEqual(valueAt(input.body, path), value)) return false;
  }
  return true;
}
