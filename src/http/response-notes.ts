import type { ServerResponse } from 'node:http';
import type { Response } from 'express';

export { declaredPlainLength, type ServedRequest } from '../requests/index.js';

/** What the request log line says of a response, kept beside it by the edge. */
interface ResponseNote {
  operationId?: string;
  clientId?: string;
  /** The fault rule that answered or shaped it, if one did (asked when the line is written: a latency rule's request may close before its handler returns). */
  faultRule?: () => string | undefined;
  error?: unknown;
}

const notes = new WeakMap<ServerResponse, ResponseNote>();

const noteOf = (res: Response): ResponseNote => {
  let note = notes.get(res);
  if (!note) notes.set(res, (note = {}));
  return note;
};

/** Remembers which operation and client a response answers, and how to ask which fault rule was applied to it, for the request log. */
export function noteServed(res: Response, operationId: string, clientId: string | undefined, faultRule?: () => string | undefined): void {
  Object.assign(noteOf(res), { operationId, clientId, faultRule });
}

/** Remembers an unexpected failure behind a 500, for the request log. */
export function noteFailure(res: Response, error: unknown): void {
  noteOf(res).error = error;
}

export const noteOfResponse = (res: ServerResponse): Readonly<ResponseNote> => notes.get(res) ?? {};
