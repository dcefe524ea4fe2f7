import { isUtf8 } from 'node:buffer';
import { checkRawDepth, TooDeep } from './depth.js';
import { ApiError, messages } from './errors.js';

/**
 * A JSON body's bytes (UTF-8), parsed. Throws a 400 naming `body` when it is nested too
 * deep (checked from the bytes, before parsing) or is not JSON: an object or an array,
 * as body-parser's strict mode took. A byte order mark before the JSON is taken, as
 * body-parser took it. An empty body is none (undefined): an operation that needs one says
 * so, as for a request without one, rather than naming each field of `{}`. Bytes that are not UTF-8 are a 400
 * too: decoded, they would become U+FFFD and be stored changed without a word.
 */
export function parseJsonBytes(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    checkRawDepth(raw);
  } catch (error) {
    if (error instanceof TooDeep) throw new ApiError(400, error.message, [{ field: 'body', message: `is nested deeper than ${error.limit} levels` }]);
    throw error;
  }
  if (!isUtf8(raw)) throw new ApiError(400, messages.notUtf8, [{ field: 'body', message: 'is not valid UTF-8' }]);
  const text = raw.toString('utf8').replace(/^\uFEFF/, '');
  const first = /^[\x20\x09\x0a\x0d]*(.)/.exec(text)?.[1];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch {
    throw new ApiError(400, messages.malformedJson, [{ field: 'body', message: 'is not valid JSON' }]);
  }
  // Valid JSON, but a string, a number, true, false or null: told so, not that it is not JSON.
  if (first !== '{' && first !== '[') throw new ApiError(400, messages.notAnObject, [{ field: 'body', message: 'must be a JSON object' }]);
  // A number past what a double holds (1e400) parses to Infinity, which passes as an integer and is stored as null.
  if (MAY_OVERFLOW.test(text)) {
    const field = fieldWhere(parsed, '', isInfinite);
    if (field !== undefined) throw new ApiError(400, messages.notFinite, [{ field: field || 'body', message: 'is a number too large to hold (at most about 1.8e308)' }]);
  }
  // An escaped half of a surrogate pair alone (`"\ud800"`) is valid JSON but no character: a
  // strict receiver (Python encoding it, Go decoding it) fails on the webhook that carries it.
  if (MAY_HOLD_SURROGATE.test(text)) {
    const field = fieldWhere(parsed, '', isIllFormed);
    if (field !== undefined) throw new ApiError(400, messages.notWellFormed, [{ field: field || 'body', message: 'is not well-formed Unicode text (a lone surrogate)' }]);
  }
  return parsed;
}

/** An escaped surrogate (`\ud83d`, half of an emoji's pair or alone): the cheap test before a walk. */
const MAY_HOLD_SURROGATE = /\\u[dD][89a-fA-F]/;

const isInfinite = (value: unknown): boolean => typeof value === 'number' && !Number.isFinite(value);
/** A lone half of a surrogate pair (with the u flag a whole pair reads as its one character). */
const LONE_SURROGATE = /\p{Surrogate}/u;
const isIllFormed = (value: unknown): boolean => typeof value === 'string' && LONE_SURROGATE.test(value);

/**
 * A number that may parse to Infinity: an exponent of three digits or more, or 309 digits
 * in a row (a cheap test before a walk). The run is looked for only where one starts: from
 * every digit of it, a body of 308-digit runs cost a second a MiB (a partner's bodies could
 * hold the event loop); so, about 10 ms.
 */
const MAY_OVERFLOW = /[eE][+-]?\d{3}|(?<!\d)\d{309}/;

/** The field path (`items[0].cod`) of the first value in a parsed body that `bad` holds of (a field's name counts as its value), or undefined. */
function fieldWhere(value: unknown, path: string, bad: (value: unknown) => boolean): string | undefined {
  if (bad(value)) return path;
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const found = fieldWhere(value[i], `${path}[${i}]`, bad);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    const at = path === '' ? key : `${path}.${key}`;
    const found = bad(key) ? at : fieldWhere(item, at, bad);
    if (found !== undefined) return found;
  }
  return undefined;
}
