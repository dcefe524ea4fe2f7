import type { Request, Response } from 'express';
import type { CompiledOperation } from '../../spec/index.js';
import type { FieldError } from '../errors.js';
import type { OperationInput } from '../handler.js';
import type { BodyVerdict } from '../large-bodies.js';
import type { ServedRequest } from '../response-notes.js';
import type { PipelineOptions } from './options.js';

/** What the observers are told of a request before it ends: everything but how it ended. */
export type Arrival = Omit<ServedRequest, 'status' | 'durationMs' | 'aborted'>;

/**
 * One request on its way through the pipeline: the express pair, the operation it
 * matched, the plain input its handler gets, and what the observers will be told.
 * Each stage reads and fills it.
 */
export interface Exchange {
  readonly req: Request;
  readonly res: Response;
  readonly op: CompiledOperation;
  readonly input: OperationInput;
  readonly served: Arrival;
  readonly options: PipelineOptions;
  /** When it arrived, in process time (ns). */
  readonly started: bigint;
  /** True once the client is known and the arrival stamped on its clock. */
  known: boolean;
  /** The token's own client, once the token is read: the log names it on a refusal before the client acted for is known. */
  callerClient: string | undefined;
  /** A large body's verdict from the worker thread (see `screenBody`); absent: the body stage parses it. */
  bodyVerdict?: BodyVerdict;
}

/** A Host header that names a host (a name, an IPv4 address or a bracketed IPv6 one) and maybe a port. */
const HOST = /^(?:\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9._~-]{1,253})(?::\d{1,5})?$/;

/**
 * The address a client reached the sandbox at, for the URLs its answers carry (POD photos,
 * the served specs): from its Host header when that names a host, else the address the
 * connection came in on. A Host header is the client's text: only a well-formed one is
 * repeated in answers and in the keys of kept tracking answers.
 */
export function baseUrlOf(req: Pick<Request, 'protocol' | 'headers' | 'socket'>): string {
  const host = req.headers.host;
  if (host !== undefined && HOST.test(host)) return `${req.protocol}://${host}`;
  const { localAddress, localPort } = req.socket;
  if (localAddress === undefined) return `${req.protocol}://localhost`;
  return `${req.protocol}://${localAddress.includes(':') ? `[${localAddress}]` : localAddress}:${localPort}`;
}

/**
 * Whose turns an authenticated request takes (FairTurns, and the store's connections):
 * its client's, or the admin lane (ADMIN_LANE) for every admin request, so an admin acting for a client
 * does not wait behind that client's own requests.
 */
export const laneOf = (input: OperationInput): string => (input.role === 'admin' ? ADMIN_LANE : (input.client?.id ?? ADMIN_LANE));

/** The lane every admin request takes, whichever client it acts for (a control character, which no client id holds, sets it apart). */
export const ADMIN_LANE = '\u0000admin';

/**
 * The lane of a request to an operation that takes no token (the specs, POD photos, the
 * metrics without an admin token; a health check takes no turn): one per operation, so a
 * loop of anyone's GETs of a spec waits its turns as a partner's load does, bounded as a
 * client's waiting requests are, and the requests with a token do not wait behind it.
 */
export const openLaneOf = (operationId: string): string => `\u0000no token: ${operationId}`;

/** Arrivals so far, in every mounted spec: orders what observers are told. */
let arrivals = 0;

/** A request that matched `op`, before any stage has run. */
export function exchangeOf(op: CompiledOperation, req: Request, res: Response, params: Record<string, string>, options: PipelineOptions): Exchange {
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
    // Parsed in its turn (the body stage): until then, none.
    body: undefined,
    baseUrl: baseUrlOf(req),
  };
  const served: Arrival = { input, query: sent, seq: options.arrival ? 0 : ++arrivals, method: input.method, arrivedAt: options.now(), violations: [] as FieldError[] };
  return { req, res, op, input, served, options, started, known: false, callerClient: undefined };
}
