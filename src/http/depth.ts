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

/** Thrown by `tooDeep` (body-parser's verify hook): the body is refused before it is parsed. */
export class TooDeep extends Error {
  readonly status = 400;
  constructor(readonly limit: number) {
    super(depthMessage(limit));
  }
}

const OPEN_OBJECT = 0x7b, OPEN_ARRAY = 0x5b, CLOSE_OBJECT = 0x7d, CLOSE_ARRAY = 0x5d, QUOTE = 0x22, BACKSLASH = 0x5c;

/**
 * Checks a raw JSON body's nesting in one pass over its bytes, before JSON.parse: a body
 * of a million `[` would otherwise cost hundreds of milliseconds of parsing (before any
 * token is checked) only to be refused. Brackets inside strings do not count. Throws
 * TooDeep past `limit`.
 */
export function checkRawDepth(body: Buffer, limit = MAX_JSON_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i += 1) {
    const byte = body[i]!;
    if (inString) {
      if (byte === BACKSLASH) i += 1;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      depth += 1;
      if (depth > limit) throw new TooDeep(limit);
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) depth -= 1;
  }
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
