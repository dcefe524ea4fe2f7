import { compileGlob } from './glob.js';
import type { FieldError } from './errors.js';

/** An operation of the served provider spec, as a match (a fault rule, a request count) may name it. */
export interface MatchableOperation {
  operationId: string;
  method: string;
  /** The spec's path, with `{name}` segments, e.g. `/v1/order/tracking/{order_no}`. */
  path: string;
  /** Whether it takes a body (absent: not known, taken as yes). */
  body?: 'none' | 'optional' | 'required';
  /** The `pattern` of each path parameter whose schema has one: a request whose segment breaks it is refused before any match applies. */
  pathPatterns?: Readonly<Record<string, string>>;
}

/** What a match may say about the operation a request is of. */
export interface OperationCriteria {
  operation_id?: string;
  method?: string;
  path?: string;
}

const CONTROL_PREFIX = /^\/__sandbox(\/|$)/;

const PARAMETER = /\{[^/{}]+\}/g;
const hasWildcard = (segment: string): boolean => segment.includes('*') || segment.includes('?');

/** Whether `text` (a path segment, percent-decoded as the router decodes it) meets a parameter's pattern (a pattern JavaScript cannot read, or a segment that cannot be decoded, is taken as met). */
function meetsPattern(pattern: string, text: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(decodeURIComponent(text));
  } catch {
    return true;
  }
}

/**
 * Whether a pattern of one character class repeated (`^[0-9]+$`, `^[A-Za-z0-9-]{1,32}$`)
 * may take text holding each of `characters` (percent-decoded); any other pattern, or
 * characters that cannot be decoded, is taken as taking them.
 */
function classTakes(pattern: string, characters: string): boolean {
  const oneClass = /^\^(\[(?:\\.|[^\]\\])+\])(?:[+*]|\{\d+(?:,\d*)?\})\$$/.exec(pattern)?.[1];
  if (oneClass === undefined) return true;
  try {
    const takes = new RegExp(`^${oneClass}$`, 'u');
    return [...decodeURIComponent(characters)].every((c) => takes.test(c));
  } catch {
    return true;
  }
}

/**
 * Whether a glob segment may match some request path segment of a spec path's segment: a
 * segment with `{name}` parameters (`{order_no}`, `{awb}.pdf`) takes any text in their
 * place, but a segment that is one parameter only text that meets its pattern (`patterns`;
 * a request breaking it is refused before any match applies). A glob segment with a
 * wildcard meets a pattern of one character class (`^[0-9]+$`) when the class takes each
 * of its other characters (`SBX*` an AWB, not `.*` an order number); against any other
 * pattern, or a segment with more than one parameter, it is taken as matching.
 */
function segmentFits(segment: string, target: string, patterns: Readonly<Record<string, string>> = {}): boolean {
  if (!target.includes('{')) return hasWildcard(segment) ? compileGlob(`/${segment}`).matches(`/${target}`) : segment === target;
  const whole = /^\{([^/{}]+)\}$/.exec(target)?.[1];
  const pattern = whole === undefined ? undefined : patterns[whole];
  if (hasWildcard(segment)) return pattern === undefined || classTakes(pattern, segment.replace(/[*?]/g, ''));
  if (pattern !== undefined) return meetsPattern(pattern, segment);
  const literal = target.split(PARAMETER).map((part) => part.replace(/[.*+?^$()[\]|\\]/g, '\\$&'));
  return new RegExp(`^${literal.join('[^/]+')}$`).test(segment);
}

/**
 * Whether some request path of the spec path `template` matches `glob` (see `globMatches`):
 * segment by segment, a `{name}` segment takes any one segment of the glob, a glob
 * segment with `*` or `?` is matched against the template's, `**` takes any number of
 * segments. Both are split once; the glob's `**` runs are few, so the search is small.
 */
export function globReaches(glob: string, template: string, patterns?: Readonly<Record<string, string>>): boolean {
  const split = (path: string): string[] => path.split('/').slice(1);
  const g = split(glob);
  // A request path is matched without its trailing slash, so a spec path ending in one (a --spec's) is reached as without it.
  const t = split(template.length > 1 ? template.replace(/\/+$/, '') : template);
  const seen = new Set<string>();
  const from = (i: number, j: number): boolean => {
    const key = `${i}:${j}`;
    if (seen.has(key)) return false;
    seen.add(key);
    if (i === g.length) return j === t.length;
    const segment = g[i]!;
    if (segment === '**') return from(i + 1, j) || (j < t.length && from(i, j + 1));
    if (j === t.length) return false;
    return segmentFits(segment, t[j]!, patterns) && from(i + 1, j + 1);
  };
  return from(0, 0);
}

// HEAD is answered by the GET operation of the path (and journaled as HEAD).
const takes = (op: MatchableOperation, m: string): boolean => op.method.toUpperCase() === m || (m === 'HEAD' && op.method.toUpperCase() === 'GET');

/** The operations of the served spec whose requests may meet all of a match's operation criteria. */
export function operationsMeeting({ operation_id: operationId, method, path }: OperationCriteria, operations: readonly MatchableOperation[]): MatchableOperation[] {
  return operations.filter(
    (op) => (operationId === undefined || op.operationId === operationId) && (method === undefined || takes(op, method.toUpperCase())) && (path === undefined || globReaches(path, op.path, op.pathPatterns)),
  );
}

/**
 * Field errors of a match's operation criteria that no request of the served spec can
 * meet: an operationId the spec does not have (letter case counts), a method none of its
 * operations takes, a path glob none of its paths reaches (the control API's among them:
 * its requests are never provider requests), or criteria each of which can match but no
 * one operation meets together. A match that can never apply would let a
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
  if (method !== undefined && !operations.some((op) => takes(op, method.toUpperCase()))) {
    errors.push({ field: `${prefix}method`, message: `no operation of the provider spec takes ${method}; use one of ${[...new Set(operations.map((op) => op.method.toUpperCase()))].join(', ')}` });
  }
  if (path !== undefined && path.startsWith('/')) {
    const parameter = /\{[^/{}]+\}/.exec(path)?.[0];
    if (CONTROL_PREFIX.test(path)) errors.push({ field: `${prefix}path`, message: 'is a path of the control API, whose requests are never provider requests; use a provider path, e.g. /v1/order/tracking/*' });
    else if (parameter) errors.push({ field: `${prefix}path`, message: `holds ${parameter}, a parameter of the spec's path: a glob matches the paths requests are sent to, so write * in its place (e.g. /v1/order/tracking/*)` });
    else if (path.length > 1 && path.endsWith('/')) errors.push({ field: `${prefix}path`, message: `ends with "/": a request path is matched without its trailing slash; write ${path.replace(/\/+$/, '') || '/'}` });
    else if (!operations.some((op) => globReaches(path, op.path, op.pathPatterns))) {
      const refused = operations.find((op) => globReaches(path, op.path));
      const patterns = refused && Object.entries(refused.pathPatterns ?? {}).map(([name, pattern]) => `${name} must match ${pattern}`);
      errors.push({
        field: `${prefix}path`,
        message: refused
          ? `reaches ${refused.path} only with a segment its parameters refuse (${patterns!.join('; ')}): such a request is answered 400 before any match applies`
          : `reaches no path of the provider spec; its paths are ${[...new Set(operations.map((op) => op.path))].join(', ')}`,
      });
    }
  }
  if (errors.length > 0) return errors;
  // Each criterion can match; a match needs one operation that meets all of them at once.
  if (operationsMeeting(criteria, operations).length > 0) return errors;
  const named = operations.find((op) => op.operationId === operationId);
  if (named) {
    // Each criterion at odds with the named operation, so that one correction is enough.
    const is = `${named.operationId} (${named.method.toUpperCase()} ${named.path})`;
    if (method !== undefined && !takes(named, method.toUpperCase())) errors.push({ field: `${prefix}method`, message: `is not the method of ${is}: no request of it is a ${method}; leave method out, or name the operation that takes it` });
    if (path !== undefined && !globReaches(path, named.path, named.pathPatterns)) errors.push({ field: `${prefix}path`, message: `does not reach the path of ${is}: no request of it matches; leave path out, or write a glob that reaches it` });
  } else if (method !== undefined && path !== undefined) {
    const methods = [...new Set(operations.filter((op) => globReaches(path, op.path, op.pathPatterns)).map((op) => op.method.toUpperCase()))];
    errors.push({ field: `${prefix}method`, message: `is not taken at the paths ${path} reaches, which take ${methods.join(', ')}: no request meets both` });
  }
  return errors;
}
