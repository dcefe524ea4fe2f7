import type { RequestHandler } from 'express';
import { ApiError } from './errors.js';
import { sendError } from './respond.js';

/** Deepest nesting of objects and arrays a JSON body may have; the APIs' own bodies are 3 deep. */
export const MAX_JSON_DEPTH = 64;

export const depthMessage = (limit: number) => `The JSON body is nested deeper than ${limit} levels; no operation takes such a body.`;

/** How deep a parsed JSON value nests, counted without recursion (a hostile body may be thousands deep). */
export function jsonDepth(value: unknown, stopAt = Infinity): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > stopAt) return deepest;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/**
 * Rejects JSON bodies nested deeper than `limit` with a 400 naming `body`. JSON.parse
 * accepts any depth, but JSON.stringify (the request journal, logs) and recursive
 * validators overflow the stack on it: the request would end in a 500.
 *
 * @example app.use(jsonBody('1mb'), maxJsonDepth(64))
 */
export function maxJsonDepth(limit = MAX_JSON_DEPTH): RequestHandler {
  return (req, res, next) => {
    if (req.body !== null && typeof req.body === 'object' && jsonDepth(req.body, limit) > limit) {
      return sendError(res, new ApiError(400, depthMessage(limit), [{ field: 'body', message: `is nested deeper than ${limit} levels` }]));
    }
    next();
  };
}
