/** Deepest nesting of objects and arrays a JSON body may have; the APIs' own bodies are 3 deep. */
export const MAX_JSON_DEPTH = 64;

export const depthMessage = (limit: number) => `The JSON body is nested deeper than ${limit} levels; no operation takes such a body.`;

/** Thrown by `checkRawDepth` (body-parser's verify hook): the body is refused before it is parsed. */
export class TooDeep extends Error {
  readonly status = 400;
  constructor(readonly limit: number) {
    super(depthMessage(limit));
  }
}

/** Thrown by `checkRawDepth` past `maxCommas`: more members or elements than the message can have. */
class TooWide extends Error {
  constructor(readonly limit: number) {
    super(`The JSON text has more than ${limit} commas outside its strings.`);
  }
}

const OPEN_OBJECT = 0x7b, OPEN_ARRAY = 0x5b, CLOSE_OBJECT = 0x7d, CLOSE_ARRAY = 0x5d, QUOTE = 0x22, BACKSLASH = 0x5c, COMMA = 0x2c;

/**
 * Checks a raw JSON body's nesting in one pass over its bytes, before JSON.parse: a body
 * of a million `[` would otherwise cost hundreds of milliseconds of parsing (before any
 * token is checked) only to be refused. JSON.parse accepts any depth, but JSON.stringify
 * (the request journal, the readiness report, logs) and recursive validators overflow the
 * stack on it: a 500, or a crash in a listener. Exact for UTF-8 only (in another charset a
 * bracket's or a quote's byte can be half of another character), the one charset
 * `jsonBody` takes. Brackets inside strings do not count. Throws
 * TooDeep past `limit`, and TooWide past `maxCommas` commas outside strings (a message of
 * a few fields: thousands of members cost milliseconds to parse where one long string of
 * the same size costs a fortieth of it).
 */
export function checkRawDepth(body: Buffer, limit = MAX_JSON_DEPTH, maxCommas = Infinity): void {
  let depth = 0;
  let inString = false;
  let commas = 0;
  for (let i = 0; i < body.length; i += 1) {
    const byte = body[i]!;
    if (inString) {
      if (byte === BACKSLASH) i += 1;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === COMMA) {
      if (++commas > maxCommas) throw new TooWide(maxCommas);
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      depth += 1;
      if (depth > limit) throw new TooDeep(limit);
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) depth -= 1;
  }
}
