import type { Response } from 'express';
import type { FieldError } from '../shared/errors.js';
import type { OperationInput } from './handler.js';

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

/** What the request log line says of a response, kept beside it by the edge. */
interface ResponseNote {
  operationId?: string;
  clientId?: string;
  error?: unknown;
}

const notes = new WeakMap<Response, ResponseNote>();

const noteOf = (res: Response): ResponseNote => {
  let note = notes.get(res);
  if (!note) notes.set(res, (note = {}));
  return note;
};

/** Remembers which operation and client a response answers, for the request log. */
export function noteServed(res: Response, operationId: string, clientId: string | undefined): void {
  Object.assign(noteOf(res), { operationId, clientId });
}

/** Remembers an unexpected failure behind a 500, for the request log. */
export function noteFailure(res: Response, error: unknown): void {
  noteOf(res).error = error;
}

export const noteOfResponse = (res: Response): Readonly<ResponseNote> => notes.get(res) ?? {};
