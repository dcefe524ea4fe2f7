import { isDeepStrictEqual } from 'node:util';
import type { OperationInput } from '../requests/index.js';
import { compileGlob, type CompiledGlob } from './glob.js';
import type { FaultMatch } from '../records/index.js';

/** Compiled globs by their text: rules are matched against every request of their client. */
const compiled = new Map<string, CompiledGlob>();
let compiledBytes = 0;
/**
 * Most memory the compiled globs hold; past it the cache starts again. A glob of 500
 * printable ASCII characters holds at most ~6.5 KB of masks, so this keeps ~2,500 of them
 * (25 clients' 100 rules each); rules created and deleted in a loop hold no more.
 */
const COMPILED_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Whether a request path matches a path glob: `*` matches within one segment, `?` one
 * character, a segment `**` any number of segments; everything else is literal. A
 * trailing slash on the path is ignored. Linear in the path (see `compileGlob`), so no
 * glob a client sends can stall the server.
 *
 * @example globMatches('/v1/order/tracking/*', '/v1/order/tracking/SBX1') // true
 */
export function globMatches(glob: string, path: string): boolean {
  let matcher = compiled.get(glob);
  if (!matcher) {
    matcher = compileGlob(glob);
    if (compiledBytes + matcher.bytes > COMPILED_MAX_BYTES) {
      compiled.clear();
      compiledBytes = 0;
    }
    compiled.set(glob, matcher);
    compiledBytes += matcher.bytes;
  }
  return matcher.matches(path);
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
