import type { Response } from 'express';
import { ApiError, messages } from './errors.js';
import type { Reply } from './handler.js';

/** Writes a handler's reply. */
export function sendReply(res: Response, reply: Reply): void {
  if ('streamed' in reply) return;
  if (reply.headers) res.set(reply.headers);
  if (reply.serialized !== undefined) res.status(reply.status).type(reply.type ?? 'application/json').send(reply.serialized);
  else if (reply.body === undefined) res.status(reply.status).end();
  else res.status(reply.status).json(reply.body);
}

/** The one place an error becomes an HTTP answer: the envelope, never HTML or a stack. */
export function sendError(res: Response, error: unknown): void {
  const apiError = error instanceof ApiError ? error : new ApiError(500, messages.internal);
  if (!(error instanceof ApiError)) res.locals.error = error;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.set(apiError.headers).status(apiError.status).json(apiError.toEnvelope());
}
