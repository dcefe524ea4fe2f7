import { createHash } from 'node:crypto';
import { appliedFault } from '../faults/index.js';
import { declaredPlainLength, type ServedRequest } from '../requests/index.js';

/** A short hash of a request's path and body: the same request sent again has the same one. */
const fingerprint = (served: ServedRequest): string => createHash('sha256').update(`${served.input.path}\n${JSON.stringify(served.input.body ?? null)}`).digest('hex').slice(0, 16);

/** The same for a large body, from the bytes as sent: the same bytes sent again hash the same, without serializing the body again. */
const bytesFingerprint = (path: string, bytes: Uint8Array): string => createHash('sha256').update(`${path}\n`).update(bytes).digest('hex').slice(0, 16);

/** The same for a create's body without its items' order codes: the same shipments sent again under new codes hash the same. */
const contentFingerprint = (served: ServedRequest): string => {
  const body = served.input.body as { items?: unknown[] } | undefined;
  const items = Array.isArray(body?.items) ? body.items.map((item) => (item !== null && typeof item === 'object' ? { ...item, order_code: undefined } : item)) : undefined;
  return createHash('sha256').update(JSON.stringify({ ...body, items })).digest('hex').slice(0, 16);
};

/** Most fields of a 400 a refusal's fingerprint covers (see refusalFingerprint). */
const NAMED_MOST = 16;

/** The value at a field as a 400 names it (`items[1].item_weight`) in a parsed body, or undefined. */
function valueAt(body: unknown, field: string): unknown {
  let value = body;
  for (const part of field.split(/\.|\[(\d+)\]/)) {
    if (part === undefined || part === '') continue;
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/**
 * What a 400 refused of a create, hashed: the values of the body's fields it named. The
 * same mistake sent again hashes the same, whatever else changed around it (new order
 * codes, an id the client adds to every request and the provider ignores, its keys in
 * another order); a fix of a named field, or another field refused, hashes otherwise.
 * Undefined when the 400 named no field of the body (a header's, or none).
 */
function refusalFingerprint(served: ServedRequest): string | undefined {
  if (served.status !== 400) return undefined;
  const fields = [...new Set(served.violations.map((v) => v.field).filter((f) => f !== 'body' && !f.startsWith('header.') && !f.startsWith('query.')))].sort().slice(0, NAMED_MOST);
  if (fields.length === 0) return undefined;
  const named = fields.map((field) => [field, valueAt(served.input.body, field) ?? null]);
  return createHash('sha256').update(`${served.input.path}\n${JSON.stringify(named)}`).digest('hex').slice(0, 16);
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
  fault: ReturnType<typeof appliedFault>;
  /** Items in a create's body. */
  items: number;
  fingerprint: () => string;
  /** What a refusal compares: for a create a 400 refused naming fields of its body, those fields' values hashed (see refusalFingerprint); else the fingerprint. */
  refusal: () => string;
  /** A create's: the first order codes of its items, one a line (null when it has none). */
  codes: string | null;
  /** A create's: the numbers of the orders it stored, when it had stored them as its connection closed. */
  created?: readonly string[];
  /** A create's kept body without its order codes, hashed (undefined for a body not kept). */
  content?: () => string;
}

/** What an observation keeps of a served request until it is judged (see Observed). */
export function observed(served: ServedRequest): Observed {
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
    input: { operation: input.operation, client: input.client, method: input.method, path: input.path, params: input.params, query: {}, headers: {}, body: small ? input.body : undefined, baseUrl: '', ...(input.answeredOrder !== undefined ? { answeredOrder: input.answeredOrder } : {}), ...(input.mocked ? { mocked: true } : {}) },
  };
  const create = op === 'createOrder' ? { codes: orderCodes(items), ...(input.createdOrders ? { created: input.createdOrders } : {}) } : { codes: null };
  // A tracking read has no body: what is kept of it (its path) is all its fingerprint needs, hashed only if judging asks.
  if (small) {
    const print = () => fingerprint(kept);
    return { served: kept, fault, items: count, fingerprint: print, refusal: () => refusalFingerprint(kept) ?? print(), ...create, content: () => contentFingerprint(kept) };
  }
  if (op === 'trackOrder') return { served: kept, fault, items: count, fingerprint: () => fingerprint(kept), refusal: () => fingerprint(kept), codes: null };
  const raw = input.bodyBytes;
  const print = op !== 'createOrder' ? '' : raw !== undefined ? bytesFingerprint(input.path, raw) : fingerprint(served);
  // A large body is not kept: what a 400 named of it is hashed now.
  const refusal = op === 'createOrder' ? (refusalFingerprint(served) ?? print) : print;
  return { served: kept, fault, items: count, fingerprint: () => print, refusal: () => refusal, ...create };
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
