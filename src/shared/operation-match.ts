import { compileGlob } from './glob.js';
import type { FieldError } from './errors.js';

/** An operation of the served provider spec, as a match (a fault rule, a request count) may name it. */
export interface MatchableOperation {
  operationId: string;
  method: string;
  /** The spec's path, with `{name}` segments, e.g. `/v1/order/tracking/{order_no}`. */
  path: string;
}

/** What a match may say about the operation a request is of. */
export interface OperationCriteria {
  operation_id?: string;
  method?: string;
  path?: string;
}

const CONTROL_PREFIX = /^\/__sandbox(\/|$)/;

/** Whether a `{name}` segment: any one segment of a request path fills it. */
const isParameter = (segment: string): boolean => /^\{[^/{}]+\}$/.test(segment);
const hasWildcard = (segment: string): boolean => segment.includes('*') || segment.includes('?');

/**
 * Whether some request path of the spec path `template` matches `glob` (see `globMatches`):
 * segment by segment, a `{name}` segment takes any one segment of the glob, a glob
 * segment with `*` or `?` is matched against the template's, `**` takes any number of
 * segments. Both are split once; the glob's `**` runs are few, so the search is small.
 */
export function globReaches(glob: string, template: string): boolean {
  const split = (path: string): string[] => path.replace(/\/+$/, '').split('/').slice(1);
  const g = split(glob);
  const t = split(template);
  const seen = new Set<string>();
  const from = (i: number, j: number): boolean => {
    const key = `${i}:${j}`;
    if (seen.has(key)) return false;
    seen.add(key);
    if (i === g.length) return j === t.length;
    const segment = g[i]!;
    if (segment === '**') return from(i + 1, j) || (j < t.length && from(i, j + 1));
    if (j === t.length) return false;
    const target = t[j]!;
    const fits = isParameter(target) || (hasWildcard(segment) ? compileGlob(`/${segment}`).matches(`/${target}`) : segment === target);
    return fits && from(i + 1, j + 1);
  };
  return from(0, 0);
}

/**
 * Field errors of a match's operation criteria that no request of the served spec can
 * meet: an operationId the spec does not have (letter case counts), a method none of its
 * operations takes, a path glob none of its paths reaches (the control API's among them:
 * its requests are never provider requests). A match that can never apply would let a
 * test of the client's handling pass having tested nothing. `prefix` names the fields
 * (`match.` for a fault rule).
 */
export function unmatchableCriteria(criteria: OperationCriteria, operations: readonly MatchableOperation[], prefix = ''): FieldError[] {
  const errors: FieldError[] = [];
  if (operations.length === 0) return errors;
  const { operation_id: operationId, method, path } = criteria;
  if (operationId !== undefined && !operations.some((op) => op.operationId === operationId)) {
    const near = operations.find((op) => op.operationId.toLowerCase() === operationId.toLowerCase());
    errors.push({
      field: `${prefix}operation_id`,
      message: `is not an operation of the provider spec${near ? ` (letter case counts: ${near.operationId})` : ''}; use one of ${operations.map((op) => op.operationId).join(', ')}`,
    });
  }
  if (method !== undefined && !operations.some((op) => op.method.toUpperCase() === method.toUpperCase())) {
    errors.push({ field: `${prefix}method`, message: `no operation of the provider spec takes ${method}; use one of ${[...new Set(operations.map((op) => op.method.toUpperCase()))].join(', ')}` });
  }
  if (path !== undefined && path.startsWith('/')) {
    if (CONTROL_PREFIX.test(path)) errors.push({ field: `${prefix}path`, message: 'is a path of the control API, whose requests are never provider requests; use a provider path, e.g. /v1/order/tracking/*' });
    else if (!operations.some((op) => globReaches(path, op.path))) {
      errors.push({ field: `${prefix}path`, message: `reaches no path of the provider spec; its paths are ${[...new Set(operations.map((op) => op.path))].join(', ')}` });
    }
  }
  return errors;
}
