import { createHash, randomUUID } from 'node:crypto';
import { appliedFault } from '../faults/index.js';
import { declaredPlainLength, type ServedRequest } from '../requests/index.js';
import { declaresABody } from '../shared/index.js';

/** A short hash of a request's path and body: the same request sent again has the same one. */
const fingerprint = (served: ServedRequest): string => createHash('sha256').update(`${served.input.path}\n${JSON.stringify(served.input.body ?? null)}`).digest('hex').slice(0, 16);

/** The same for a large body, from the bytes as sent: the same bytes sent again hash the same, without serializing the body again. */
const bytesFingerprint = (path: string, bytes: Uint8Array): string => createHash('sha256').update(`${path}\n`).update(bytes).digest('hex').slice(0, 16);

/** `make`'s value, made at the first call only: judging may ask for a hash several times (a fault compares the requests after it). */
function once(make: () => string): () => string {
  let made: string | undefined;
  return () => (made ??= make());
}

/** A create's body reduced to what the provider reads of it (the served spec's fields), from the sandbox's wiring; without it, the body as sent. */
export type Readable = (body: Record<string, unknown>) => Record<string, unknown>;

/** A value with every object's keys in order: two bodies that differ only in their keys' order are one. */
function inKeyOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(inKeyOrder);
  if (value === null || typeof value !== 'object') return value;
  const object = value as Record<string, unknown>;
  return Object.fromEntries(Object.keys(object).sort().map((key) => [key, inKeyOrder(object[key])]));
}

/**
 * A create's body as the provider reads it, hashed: without the fields the served spec does
 * not know (the sandbox ignores them), its keys in order; for judging refusals, without its
 * items' order codes too. The same body sent again with an id the client adds to every
 * request, or with its keys in another order, hashes the same (a refused one also under new
 * order codes); another order (another receiver, another parcel) or a fix hashes otherwise.
 * Undefined for a body that is not an object.
 */
function readFingerprint(served: ServedRequest, readable: Readable | undefined, codes: 'kept' | 'dropped'): string | undefined {
  const body = served.input.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const read = readable ? readable(body as Record<string, unknown>) : (body as Record<string, unknown>);
  const items =
    codes === 'dropped' && Array.isArray(read.items) ? read.items.map((item: unknown) => (item !== null && typeof item === 'object' && !Array.isArray(item) ? { ...item, order_code: undefined } : item)) : read.items;
  return createHash('sha256').update(`${served.input.path}\n${JSON.stringify(inKeyOrder({ ...read, items }))}`).digest('hex').slice(0, 16);
}

/** The order codes of a create's items a waiting observation keeps (see judgeAttempt). */
const MAX_CODES = 10;

/** Bodies up to this size (Content-Length) stay with a waiting observation; a bigger one is reduced to what judging needs. */
const KEPT_BODY_BYTES = 16 * 1024;

/**
 * A request as its observation keeps it until judged: what judging reads of it (no
 * headers or query; a create's body only up to KEPT_BODY_BYTES, else its fingerprint).
 */
export interface Observed {
  served: ServedRequest;
  /** The client's tokens, which its events show redacted in its path and order code, as the journal does (the client's read-only tokens read the report). */
  secrets: readonly string[];
  fault: ReturnType<typeof appliedFault>;
  /** Items in a create's body. */
  items: number;
  fingerprint: () => string;
  /** What a retry compares once the report has one to wait for: a create's body as the provider reads it, order codes kept, hashed (see readFingerprint); else the fingerprint. */
  same: () => string;
  /** What a refusal compares: a create's body as the provider reads it, hashed without its order codes (see readFingerprint); else the fingerprint. */
  refusal: () => string;
  /** A create's: the first order codes of its items, one a line (null when it has none). */
  codes: string | null;
  /** A create's: the numbers of the orders it stored, when it had stored them as its connection closed. */
  created?: readonly string[];
  /** A create's kept body as the provider reads it, without its order codes, hashed, as a refusal compares it (undefined for a body not kept): the same shipments under new codes. */
  content?: () => string;
}

/** What an observation keeps of a served request until it is judged (see Observed). */
export function observed(served: ServedRequest, readable?: Readable, secrets: readonly string[] = []): Observed {
  const { input } = served;
  const fault = appliedFault(input);
  const items = (input.body as { items?: unknown } | undefined)?.items;
  const count = Array.isArray(items) ? items.length : 0;
  const op = input.operation.operationId;
  // Only creates and tracking reads are judged by their fingerprint (see the error marks).
  const small = op === 'createOrder' && (declaredPlainLength(input.headers) ?? Number.POSITIVE_INFINITY) <= KEPT_BODY_BYTES;
  const kept: ServedRequest = {
    ...served,
    query: {},
    input: { operation: input.operation, client: input.client, method: input.method, path: input.path, params: input.params, query: {}, headers: {}, body: small ? input.body : undefined, baseUrl: '', ...(input.answeredOrder !== undefined ? { answeredOrder: input.answeredOrder } : {}), ...(input.mocked ? { mocked: true } : {}), ...(input.magicAwb ? { magicAwb: true } : {}), ...(input.retryAfter !== undefined ? { retryAfter: input.retryAfter } : {}) },
  };
  const create = op === 'createOrder' ? { codes: orderCodes(items), ...(input.createdOrders ? { created: input.createdOrders } : {}) } : { codes: null };
  // A body that did not parse (or one over 64 KiB with a field error, checked off the loop) is
  // told by its bytes; one the sandbox never read (not the gzip it says) is like no other.
  if (op === 'createOrder' && input.body === undefined && declaresABody(input.headers)) {
    const print = input.bodyBytes !== undefined ? bytesFingerprint(input.path, input.bodyBytes) : `unread:${randomUUID()}`;
    return { served: kept, secrets, fault, items: count, fingerprint: () => print, same: () => print, refusal: () => print, ...create };
  }
  // A tracking read has no body: what is kept of it (its path) is all its fingerprint needs, hashed only if judging asks.
  if (small) {
    const print = once(() => fingerprint(kept));
    const same = once(() => readFingerprint(kept, readable, 'kept') ?? print());
    const read = once(() => readFingerprint(kept, readable, 'dropped') ?? print());
    return { served: kept, secrets, fault, items: count, fingerprint: print, same, refusal: read, ...create, content: read };
  }
  if (op === 'trackOrder') return { served: kept, secrets, fault, items: count, fingerprint: () => fingerprint(kept), same: () => fingerprint(kept), refusal: () => fingerprint(kept), codes: null };
  const raw = input.bodyBytes;
  const print = op !== 'createOrder' ? '' : raw !== undefined ? bytesFingerprint(input.path, raw) : fingerprint(served);
  // A large body is not kept: it is read for refusals now, only if one is to be judged.
  const refusal = op === 'createOrder' && (served.status === 400 || served.status === 403) ? (readFingerprint(served, readable, 'dropped') ?? print) : print;
  return { served: kept, secrets, fault, items: count, fingerprint: () => print, same: () => print, refusal: () => refusal, ...create };
}

/** The first MAX_CODES order codes of a create's items, one a line; null when none. */
function orderCodes(items: unknown): string | null {
  if (!Array.isArray(items)) return null;
  const codes: string[] = [];
  for (const item of items) {
    if (codes.length === MAX_CODES) break;
    const code = (item as { order_code?: unknown } | null)?.order_code;
    if (typeof code === 'string') codes.push(code);
  }
  return codes.length > 0 ? codes.join('\n') : null;
}
