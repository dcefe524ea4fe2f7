import { createHash } from 'node:crypto';
import { appliedFault } from '../faults/index.js';
import { declaredPlainLength, type ServedRequest } from '../requests/index.js';

/** A short hash of a request's path and body: the same request sent again has the same one. */
const fingerprint = (served: ServedRequest): string => createHash('sha256').update(`${served.input.path}\n${JSON.stringify(served.input.body ?? null)}`).digest('hex').slice(0, 16);

/** The same for a large body, from the bytes as sent: the same bytes sent again hash the same, without serializing the body again. */
const bytesFingerprint = (path: string, bytes: Uint8Array): string => createHash('sha256').update(`${path}\n`).update(bytes).digest('hex').slice(0, 16);

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
  // A tracking read has no body: what is kept of it (its path) is all its fingerprint needs, hashed only if judging asks.
  if (small || op === 'trackOrder') return { served: kept, fault, items: count, fingerprint: () => fingerprint(kept) };
  const raw = input.bodyBytes;
  const print = op !== 'createOrder' ? '' : raw !== undefined ? bytesFingerprint(input.path, raw) : fingerprint(served);
  return { served: kept, fault, items: count, fingerprint: () => print };
}
