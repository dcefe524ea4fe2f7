import type { IncomingHttpHeaders } from 'node:http';
import type { Client, Role } from '../clients/index.js';
import type { FieldError } from '../records/index.js';
import type { CompiledOperation } from '../spec/index.js';

/** A tracking read's order as its answer showed it (see OperationInput.answeredOrder). */
export interface AnsweredOrder {
  order_no: string;
  version: number;
  /** True when the answer showed the journey's last step (no step to come, and a history). */
  ended: boolean;
}

/** What an operation handler gets: the validated request and its client, as plain data. */
export interface OperationInput {
  operation: CompiledOperation;
  /**
   * The client the request acts for: the token's own, or the one an admin names with
   * `X-Sandbox-Client`. Undefined on operations without security, and for an admin on a
   * sandbox-wide operation without that header.
   */
  client: Client | undefined;
  /** The role of the bearer token; undefined on operations without security. */
  role?: Role;
  /** The request method as sent (HEAD is served by the GET operation). */
  method: string;
  /** The request path, without the query. */
  path: string;
  params: Record<string, string>;
  query: Record<string, unknown>;
  headers: IncomingHttpHeaders;
  body: unknown;
  /**
   * The body's bytes as read, when one was: the journal cuts a large body, and the
   * readiness report fingerprints one, from these rather than serializing it again.
   */
  bodyBytes?: Uint8Array;
  /** e.g. `http://127.0.0.1:4010`, from the request's Host header. */
  baseUrl: string;
  /**
   * Waits for the request's turn among the clients' requests once more (see FairTurns):
   * for work resumed after a wait of its own (a latency fault), so it does not run
   * outside the turns. Absent where requests are not served in turns.
   */
  turn?: () => Promise<void>;
  /**
   * What a long read for the request (a filtered listing's scan) awaits between its slices:
   * the request's turn again, and once its client has hung up, a throw that ends the read
   * unanswered (nothing else is left to do for it). Absent where requests are not served in turns.
   */
  between?: () => Promise<void>;
  /**
   * Set by a tracking read that found the client's order (answered 200, or 404 before its
   * first scan): the order as the answer was made from it. The readiness report judges
   * what the answer showed, not the order as it is by the time it judges (later on
   * PostgreSQL, after the client's next requests), and reads no order to judge it.
   */
  answeredOrder?: AnsweredOrder;
  /** Set by a create that stored its orders: their numbers (the readiness report tells a create the client gave up on by them). */
  createdOrders?: string[];
  /** Set when the answer is one of the spec's documented examples (a `Prefer`), not the handler's: nothing was stored. */
  mocked?: boolean;
  /** Set by a tracking read of a scenario's magic AWB: a fixture every client reads, whose answer never changes; no journey of the client's. */
  magicAwb?: boolean;
  /**
   * Set when the sandbox refused to read the request's body (its token had as many bodies
   * being read as it may): the 429 is the sandbox's own protection, and what the client
   * sent is unknown, so the readiness report does not judge the request.
   */
  bodyUnread?: boolean;
  /**
   * Set when a refusal's answer or a 503 carries a Retry-After (a store that cannot write,
   * a `Prefer: code=503`, a 429 of `--rate-limit`): the readiness report judges a 503's
   * retry by it.
   */
  retryAfter?: string;
}

/** A request served from a spec, as observers (the request journal) see it once its connection closes. */
export interface ServedRequest {
  input: OperationInput;
  /** The query as the request sent it, before validation coerced `input.query` (strings, or arrays of them). */
  query: Record<string, unknown>;
  /** Increases with arrival: per client when the mount numbers them (`MountOptions.arrival`). */
  seq: number;
  method: string;
  /** When it arrived, on the client's clock (epoch ms). */
  arrivedAt: number;
  /** The field errors of the 400 the request was rejected with (schema or rule violations). */
  violations: FieldError[];
  /** The status answered, or null when no status line was sent (reset, hang). */
  status: number | null;
  /** Real milliseconds from arrival until the answer ended or the connection closed. */
  durationMs: number;
  /** True when the connection closed before the answer ended. */
  aborted: boolean;
}

/**
 * The body's size in bytes as the client declared it (Content-Length), when it came
 * uncompressed; undefined when it came compressed (gzip, deflate, br: Content-Length counts
 * the bytes sent, and the body may parse to a thousand times that) or with no usable length
 * (chunked). Tells whether a parsed body is small without serializing it.
 */
export function declaredPlainLength(headers: ServedRequest['input']['headers']): number | undefined {
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && String(encoding).toLowerCase() !== 'identity') return undefined;
  const declared = Number(headers['content-length']);
  return Number.isFinite(declared) ? declared : undefined;
}
