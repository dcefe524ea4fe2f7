import type { Request, RequestHandler, Response } from 'express';
import type { ClientRegistry } from '../clients/index.js';
import type { CompiledOperation, CompiledSpec } from '../spec/index.js';
import type { RequestScope } from '../store/index.js';
import { authenticate } from './auth.js';
import { bodyBytesOf } from './edge.js';
import { authorize } from './roles.js';
import { ApiError, invalid, messages, toApiError, type FieldError } from './errors.js';
import type { Handler, HandlerMap, Interceptor, OperationInput, Reply } from './handler.js';
import { sendError, sendReply } from './respond.js';
import { noteFailure, noteServed, type ServedRequest } from './served.js';

export interface MountOptions {
  registry: ClientRegistry;
  handlers: HandlerMap;
  /** Answers operations that have no handler (spec-driven answers). */
  fallback: Handler;
  interceptors: Interceptor[];
  /** Told of every request once its connection closes (the request journal). */
  observers?: Array<(served: ServedRequest) => void>;
  /** Told when an observer throws: the request has been answered, and the process must not go down with it. */
  onObserverError?: (error: unknown) => void;
  /** The time on the client's clock (the sandbox's before the client is known), for `arrivedAt`. */
  now: (clientId?: string) => number;
  /**
   * Brings the client's clock ('' : the sandbox's, for an admin acting for none) up to
   * what a shared store keeps, before the request is served (absent: the clocks are this
   * process's own).
   */
  refreshClock?: (clientId: string) => Promise<void>;
  /** Numbers an authenticated request of the client, in arrival order (ids of its journal entries are per client). */
  arrival?: (clientId: string) => number;
  /** Runs each request in the store's request scope (see `Storage.requestScope`), told its lane (see `turn`) once its client is known. */
  scope?: RequestScope;
  /** Called with the client id of each authenticated request (`(admin)` for an admin acting for none) before it is validated; rejects to refuse it (the rate limit). */
  admit?: (clientId: string) => Promise<void>;
  /**
   * Resolves when it is an authenticated request's turn to be served (see FairTurns),
   * after `admit` and once its arrival is stamped; `lane` is the client's id, or
   * `(admin)` for every admin request. Rejects to refuse it (too many waiting).
   */
  turn?: (lane: string, options?: { capped?: boolean; bytes?: number }) => Promise<void>;
  /** Told the loop time (ms) an authenticated request's observers took once it closed, outside its turn (see FairTurns.charge). */
  charge?: (lane: string, ms: number) => void;
}

const isJson = (type: string | undefined): boolean => !!type && /^application\/([\w.+-]*\+)?json\b/i.test(type);
const hasBody = (req: Request): boolean =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/** A Host header that names a host (a name, an IPv4 address or a bracketed IPv6 one) and maybe a port. */
const HOST = /^(?:\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9._~-]{1,253})(?::\d{1,5})?$/;

/**
 * The address a client reached the sandbox at, for the URLs its answers carry (POD photos,
 * the served specs): from its Host header when that names a host, else the address the
 * connection came in on. A Host of 15 KB of anything went into every POD photo URL and
 * into the key of the tracking answers kept: 10,000 of them grew the process by ~570 MB.
 */
export function baseUrlOf(req: Pick<Request, 'protocol' | 'headers' | 'socket'>): string {
  const host = req.headers.host;
  if (host !== undefined && HOST.test(host)) return `${req.protocol}://${host}`;
  const { localAddress, localPort } = req.socket;
  if (localAddress === undefined) return `${req.protocol}://localhost`;
  return `${req.protocol}://${localAddress.includes(':') ? `[${localAddress}]` : localAddress}:${localPort}`;
}

/** Checks content type and the spec's schemas; throws the 415/400. */
function check(op: CompiledOperation, input: OperationInput, req: Request): void {
  if (op.body !== 'none' && hasBody(req) && !isJson(req.headers['content-type'])) {
    throw new ApiError(415, messages.unsupportedMediaType(req.headers['content-type'] ?? 'none'));
  }
  if (op.body === 'required' && input.body === undefined) throw invalid([{ field: 'body', message: 'is required' }], messages.bodyRequired);
  const problems = op.validateRequest({ path: input.params, query: input.query, headers: input.headers, body: input.body });
  if (problems.length > 0) throw invalid(problems);
}

/** A path template of the spec, compiled once: its pattern, parameter names and operations by method. */
interface PathRoute {
  pattern: RegExp;
  names: string[];
  methods: Map<string, (req: Request, res: Response, params: Record<string, string>) => Promise<void>>;
  allow: string;
}

function compilePath(template: string): { pattern: RegExp; names: string[] } {
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
  return { pattern: new RegExp(`^${source}/?$`, 'i'), names };
}

function decodeParams(route: PathRoute, match: RegExpExecArray): Record<string, string> {
  const params: Record<string, string> = {};
  route.names.forEach((name, i) => {
    try {
      params[name] = decodeURIComponent(match[i + 1]!);
    } catch {
      throw invalid([{ field: name, message: 'is not valid percent-encoded text' }]);
    }
  });
  return params;
}

/**
 * Serves every operation of a compiled spec: security, validation, then the
 * interceptors, then the operation's handler (or the fallback). A path with no
 * operation for the method answers 405 with `Allow`; a path the spec does not have
 * goes on to the next middleware. The routes are compiled once into one table and
 * matched in one pass (paths without parameters first), without express's router.
 */
export function mountSpec(spec: CompiledSpec, options: MountOptions): RequestHandler {
  const routes = new Map<string, PathRoute>();
  for (const op of spec.operations) {
    const route = routes.get(op.path) ?? { ...compilePath(op.path), methods: new Map(), allow: '' };
    routes.set(op.path, route);
    route.methods.set(op.method.toUpperCase(), serveOperation(op, options.handlers[op.operationId] ?? options.fallback, options));
  }
  for (const route of routes.values()) {
    const methods = [...route.methods.keys()];
    route.allow = (methods.includes('GET') ? [...methods, 'HEAD'] : methods).join(', ');
  }
  const table = [...routes.values()].sort((a, b) => a.names.length - b.names.length);
  return (req, res, next) => {
    for (const route of table) {
      const match = route.pattern.exec(req.path);
      if (!match) continue;
      const serve = route.methods.get(req.method) ?? (req.method === 'HEAD' ? route.methods.get('GET') : undefined);
      if (!serve) {
        res.setHeader('Allow', route.allow);
        return sendError(res, new ApiError(405, messages.methodNotAllowed(req.method, route.allow.split(', '))));
      }
      let params: Record<string, string>;
      try {
        params = decodeParams(route, match);
      } catch (error) {
        return sendError(res, error);
      }
      // A failure even the envelope could not answer drops the connection; it never ends the process.
      return void serve(req, res, params).catch((error: unknown) => {
        noteFailure(res, error);
        res.destroy();
      });
    }
    next();
  };
}

function observe(
  res: Response,
  served: Omit<ServedRequest, 'status' | 'durationMs' | 'aborted'>,
  started: bigint,
  observers: Array<(served: ServedRequest) => void>,
  onError: (error: unknown) => void,
  charge: (ms: number) => void,
): void {
  res.once('close', () => {
    const observing = performance.now();
    // Field by field: a spread here was a noticeable share of a tracking read.
    const done: ServedRequest = {
      input: served.input,
      query: served.query,
      seq: served.seq,
      method: served.method,
      arrivedAt: served.arrivedAt,
      violations: served.violations,
      status: res.headersSent ? res.statusCode : null,
      durationMs: Number(process.hrtime.bigint() - started) / 1e6,
      aborted: !res.writableFinished,
    };
    // In a close listener a throw would be uncaught: one observer's failure is reported, and the others still run.
    for (const observer of observers) {
      try {
        observer(done);
      } catch (error) {
        onError(error);
      }
    }
    charge(performance.now() - observing);
  });
}

/**
 * Whose turns an authenticated request takes (FairTurns, and the store's connections):
 * its client's, or `(admin)` for every admin request, so an admin acting for a client
 * does not wait behind that client's own requests.
 */
const laneOf = (input: OperationInput): string => (input.role === 'admin' ? '(admin)' : (input.client?.id ?? '(admin)'));

/** Arrivals so far, in every mounted spec: orders what observers are told. */
let arrivals = 0;

function serveOperation(op: CompiledOperation, handler: Handler, options: MountOptions) {
  const serve = serveInScope(op, handler, options);
  const { scope } = options;
  if (!scope) return serve;
  // Ended at the latest with the request (one refused before its handler, say), so nothing it left running uses the pre-read.
  return (req: Request, res: Response, params: Record<string, string>) => scope.run(() => serve(req, res, params).finally(() => scope.endPreRead()));
}

function serveInScope(op: CompiledOperation, handler: Handler, options: MountOptions) {
  const observers = options.observers ?? [];
  const onObserverError = options.onObserverError ?? (() => undefined);
  // Settings read from the handler on are read afresh (the scope's pre-read is for the interceptors).
  const handle: Handler = options.scope
    ? (input) => {
        options.scope!.endPreRead();
        return handler(input);
      }
    : handler;
  return async (req: Request, res: Response, params: Record<string, string>): Promise<void> => {
    const started = process.hrtime.bigint();
    // Express parses the query afresh at each read of req.query: this object is the request's own.
    const sent = req.query as Record<string, unknown>;
    const input: OperationInput = {
      operation: op,
      client: undefined,
      method: req.method,
      path: req.path,
      params,
      // A copy: validation coerces it in place (and fills defaults), while the journal shows the query as sent.
      query: { ...sent },
      headers: req.headers,
      body: op.body === 'none' ? undefined : req.body,
      baseUrl: baseUrlOf(req),
    };
    const served = { input, query: sent, seq: options.arrival ? 0 : ++arrivals, method: input.method, arrivedAt: options.now(), violations: [] as FieldError[] };
    // Once the client is known (even when it is then refused, say by the rate limit): its clock, its numbering.
    let known = false;
    const arrived = (): void => {
      if (known || !input.client) return;
      known = true;
      served.arrivedAt = options.now(input.client.id);
      if (options.arrival) served.seq = options.arrival(input.client.id);
    };
    if (observers.length > 0) {
      // The journal keeps up to 16 KiB of a body as text: the request's client pays for that, not whoever's turn is running.
      const charge = (ms: number) => {
        if (op.secured && input.role !== undefined) options.charge?.(laneOf(input), ms);
      };
      observe(res, served, started, observers, onObserverError, charge);
    }
    try {
      if (op.secured) {
        const caller = authenticate(options.registry, input.headers.authorization);
        input.role = caller.role;
        input.client = authorize(options.registry, op, caller, input.headers);
        options.scope?.client(laneOf(input));
        if (options.admit) await options.admit(input.client?.id ?? '(admin)');
        if (options.refreshClock) await options.refreshClock(input.client?.id ?? '');
      }
      arrived();
      if (op.secured && options.turn) {
        const lane = laneOf(input);
        const turn = options.turn;
        await turn(lane, { bytes: bodyBytesOf(req) });
        // A client that gave up while its request waited gets nothing done for it: the request is journaled as aborted, unanswered.
        if (req.socket.destroyed || !req.socket.writable) return;
        input.turn = () => turn(lane, { capped: false });
      }
      check(op, input, req);
      noteServed(res, op.operationId, input.client?.id);
      const run = options.interceptors.reduceRight<() => Promise<Reply>>(
        (next, interceptor) => () => interceptor(input, next),
        async () => handle(input),
      );
      await sendReply(res, await run());
    } catch (error) {
      arrived();
      noteServed(res, op.operationId, input.client?.id);
      const answered = toApiError(error);
      if (answered.status === 400) served.violations = answered.errors;
      sendError(res, error);
    }
  };
}
