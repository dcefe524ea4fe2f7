import type { RequestHandler } from 'express';
import type { CompiledSpec } from '../spec/index.js';
import { ApiError, invalid, messages } from './errors.js';
import type { Handler, HandlerMap } from './handler.js';
import { serveOperation, type PipelineOptions, type ServeOperation } from './pipeline/index.js';
import { sendError } from './respond.js';
import { noteFailure } from './response-notes.js';

/** A spec's pipeline options, its handlers by operationId, and what answers an operation without one. */
export interface MountOptions extends PipelineOptions {
  handlers: HandlerMap;
  /**
   * Paths match exactly as the spec writes them (case, no trailing slash), as the provider
   * documents them; a path that differs only so answers 404 naming the documented one.
   * Without it, case and a trailing slash are ignored.
   */
  exactPaths?: boolean;
  /** Answers operations that have no handler (spec-driven answers). */
  fallback: Handler;
}

/** A path template of the spec, compiled once: its pattern, parameter names and operations by method. */
interface PathRoute {
  template: string;
  pattern: RegExp;
  /** Matches the path whatever its case and with a trailing slash: a near miss of an exact route. */
  loose: RegExp;
  names: string[];
  methods: Map<string, ServeOperation>;
  /** By method, the pattern the spec gives the path's last parameter, where it gives one. */
  lastPatterns: Map<string, RegExp>;
  allow: string;
}

function compilePath(template: string, exact: boolean): { template: string; pattern: RegExp; loose: RegExp; names: string[] } {
  const names: string[] = [];
  const source = template
    .split(/(\{[^}]+\})/)
    .map((part) => {
      const name = /^\{([^}]+)\}$/.exec(part)?.[1];
      if (name === undefined) return part.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
      names.push(name);
      return '([^/]+)';
    })
    .join('');
  const loose = new RegExp(`^${source}/?$`, 'i');
  return { template, pattern: exact ? new RegExp(`^${source}$`) : loose, loose, names };
}

/**
 * The routes whose path ends in one parameter, by what comes before it in lower case
 * (`/v1/order/tracking/` for `/v1/order/tracking/{order_no}`).
 */
function stemsOf(table: readonly PathRoute[]): Map<string, PathRoute[]> {
  const stems = new Map<string, PathRoute[]>();
  for (const route of table) {
    const stem = /^(.*\/)\{[^}/]+\}$/.exec(route.template)?.[1]?.toLowerCase();
    if (stem !== undefined) stems.set(stem, [...(stems.get(stem) ?? []), route]);
  }
  return stems;
}

/**
 * The route of the method (of any, where none is given) whose path is the request's
 * followed by one parameter, the value left out (`/v1/order/tracking/` or
 * `/v1/order/tracking`: tracking's, its AWB missing), whatever the case unless
 * `exactCase`; a GET's route takes HEAD, as it serves it.
 */
function missingValueOf(stems: Map<string, PathRoute[]>, method: string | undefined, path: string, exactCase = false): PathRoute | undefined {
  const stem = path.endsWith('/') ? path : `${path}/`;
  const serves = (route: PathRoute) => method === undefined || route.methods.has(method) || (method === 'HEAD' && route.methods.has('GET'));
  return stems.get(stem.toLowerCase())?.find((route) => (!exactCase || route.template.startsWith(stem)) && serves(route));
}

/** A spec's parameter pattern as a RegExp; none for a pattern JavaScript cannot read (the parameter is then taken as any text). */
function patternOf(pattern: string | undefined): RegExp | undefined {
  try {
    return pattern === undefined ? undefined : new RegExp(pattern, 'u');
  } catch {
    return undefined;
  }
}

/** Whether the matched path's last parameter takes its value under the method's operation (any value, where the spec gives no pattern). */
function fitsLast(route: PathRoute, method: string, match: RegExpExecArray): boolean {
  const pattern = route.lastPatterns.get(method) ?? (method === 'HEAD' ? route.lastPatterns.get('GET') : undefined);
  return route.names.length === 0 || pattern === undefined || pattern.test(match.at(-1) ?? '');
}

/** The first of `routes` the path is a near miss of (whatever its case, a trailing slash), whose last parameter takes its value under `method` when one is given. */
function nearMiss(routes: readonly PathRoute[], path: string, method?: string): { route: PathRoute; match: RegExpExecArray } | undefined {
  for (const route of routes) {
    const match = route.loose.exec(path);
    if (match !== null && (method === undefined || fitsLast(route, method, match))) return { route, match };
  }
  return undefined;
}

/** The documented path a near miss meant: the template with the request's own parameter values. */
function documentedPath(route: PathRoute, match: RegExpExecArray): string {
  let i = 0;
  return route.template.replace(/\{[^}]+\}/g, () => match[++i]!);
}

/** The path's parameters, decoded; the 400 naming one that is not valid percent-encoding (thrown by the pipeline after the token is checked). */
function decodeParams(route: PathRoute, match: RegExpExecArray): Record<string, string> | ApiError {
  const params: Record<string, string> = {};
  for (const [i, name] of route.names.entries()) {
    try {
      params[name] = decodeURIComponent(match[i + 1]!);
    } catch {
      return invalid([{ field: name, message: 'is not valid percent-encoded text' }]);
    }
  }
  return params;
}

/**
 * Serves every operation of a compiled spec: security, validation, then the
 * interceptors, then the operation's handler (or the fallback). A path with no
 * operation for the method answers 405 with `Allow`; with `exactPaths`, a path that
 * differs from one of the spec only in case or a trailing slash answers 404 naming it; a
 * path the spec does not have goes on to the next middleware. The routes are compiled once into one table and
 * matched in one pass (paths without parameters first), without express's router.
 */
export function mountSpec(spec: CompiledSpec, options: MountOptions): RequestHandler {
  const routes = new Map<string, PathRoute>();
  for (const op of spec.operations) {
    const route = routes.get(op.path) ?? { ...compilePath(op.path, options.exactPaths === true), methods: new Map(), lastPatterns: new Map(), allow: '' };
    routes.set(op.path, route);
    route.methods.set(op.method.toUpperCase(), serveOperation(op, options.handlers[op.operationId] ?? options.fallback, options));
    const last = patternOf(op.pathPatterns[route.names.at(-1) ?? '']);
    if (last) route.lastPatterns.set(op.method.toUpperCase(), last);
  }
  for (const route of routes.values()) {
    const methods = [...route.methods.keys()];
    route.allow = (methods.includes('GET') ? [...methods, 'HEAD'] : methods).join(', ');
  }
  const table = [...routes.values()].sort((a, b) => a.names.length - b.names.length);
  const stems = stemsOf(table);
  return (req, res, next) => {
    for (const route of table) {
      const match = route.pattern.exec(req.path);
      if (!match) continue;
      // A value this route's last parameter cannot take, where the path is another operation's
      // up to its last parameter, names that operation without its value: `/v1/order/tracking`
      // is tracking with the AWB missing, not the detail of an order numbered "tracking" (order
      // numbers are digits). A value the parameter takes is served as it is.
      // A method the route does not serve asks the same of its other methods: `POST /v1/order/tracking`
      // is tracking's AWB missing too, not a 405 whose advice (GET) leads to that 404.
      const serve = route.methods.get(req.method) ?? (req.method === 'HEAD' ? route.methods.get('GET') : undefined);
      const fits = !options.exactPaths || (serve ? fitsLast(route, req.method, match) : [...route.methods.keys()].some((method) => fitsLast(route, method, match)));
      const missing = fits ? undefined : missingValueOf(stems, serve ? req.method : undefined, req.path, true);
      if (missing) return sendError(res, new ApiError(404, messages.missingParameter(req.method, req.path, missing.template, missing.names.at(-1)!)));
      // Such a value that makes, whatever its case, a path without parameters is that path's near
      // miss (`/v1/order/Cancel` is /v1/order/cancel's, not the detail of an order numbered
      // "Cancel"), else one whose value is missing (`/v1/order/Tracking` is tracking's).
      const plain = fits ? undefined : nearMiss(table.filter((r) => r.names.length === 0), req.path);
      if (plain) return sendError(res, new ApiError(404, messages.inexactPath(req.method, req.path, documentedPath(plain.route, plain.match))));
      const missingAnyCase = fits ? undefined : missingValueOf(stems, undefined, req.path);
      if (missingAnyCase) return sendError(res, new ApiError(404, messages.missingParameter(req.method, req.path, missingAnyCase.template, missingAnyCase.names.at(-1)!)));
      if (!serve) {
        res.setHeader('Allow', route.allow);
        return sendError(res, new ApiError(405, messages.methodNotAllowed(req.method, route.allow.split(', '))));
      }
      const params = decodeParams(route, match);
      // A failure even the envelope could not answer drops the connection; it never ends the process.
      return void serve(req, res, params).catch((error: unknown) => {
        noteFailure(res, error);
        res.destroy();
      });
    }
    if (options.exactPaths) {
      // A path that ends where a parameter of the method's operation would begin (`/v1/order/tracking/`, `/v1/order/tracking`): the value is missing.
      const missing = missingValueOf(stems, req.method, req.path);
      if (missing) return sendError(res, new ApiError(404, messages.missingParameter(req.method, req.path, missing.template, missing.names.at(-1)!)));
      // A near miss of the method's own operations whose parameter takes the value first, then
      // of a path without parameters (`DELETE /V1/ORDER` is /v1/order's, `GET /V1/Order/Cancel`
      // /v1/order/cancel's, not an order numbered "Cancel"), then a path whose value another
      // method's operation misses (`POST /V1/Order/Tracking` is tracking's), then a near miss of
      // any operation (which then answers 405 naming the methods).
      const own = nearMiss(table.filter((r) => r.methods.has(req.method)), req.path, req.method) ?? nearMiss(table.filter((r) => r.names.length === 0), req.path);
      const missingOfAny = own ? undefined : missingValueOf(stems, undefined, req.path);
      if (missingOfAny) return sendError(res, new ApiError(404, messages.missingParameter(req.method, req.path, missingOfAny.template, missingOfAny.names.at(-1)!)));
      const found = own ?? nearMiss(table, req.path);
      if (found) return sendError(res, new ApiError(404, messages.inexactPath(req.method, req.path, documentedPath(found.route, found.match))));
    }
    next();
  };
}
