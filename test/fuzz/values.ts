import fc from 'fast-check';

/** Text that has broken servers before: traversal, encodings, NUL, lone surrogates, injections, prototype keys. */
export const NASTY_TEXT = [
  '', ' ', '.', '..', '../../etc/passwd', '..\\..\\windows', '%2F', 'a/b', '%00', 'a\u0000b', '\u0000', '\uFEFF', '\uD800', '\uDFFF\uD800',
  '𝟘🚚', 'Ω≈ç√', '\u202Etxt.exe', 'null', 'true', '0', '-1', '1e309', 'NaN', 'Infinity', '9'.repeat(400),
  '<script>alert(1)</script>', "' OR 1=1 --", '${jndi:ldap://x}', '{{7*7}}', '__proto__', 'constructor', 'prototype', 'toString',
];

/** Percent-encodes the UTF-8 bytes of a string (a lone surrogate becomes U+FFFD, as on the wire), where encodeURIComponent throws. */
export function encode(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((b) => (/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

/** Short, huge, unicode and binary strings. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...NASTY_TEXT), weight: 4 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 20 }), weight: 2 },
  { arbitrary: fc.string({ maxLength: 20 }), weight: 2 },
  { arbitrary: fc.integer({ min: 1_000, max: 120_000 }).map((n) => 'x'.repeat(n)), weight: 1 },
);

/** A JSON value of the wrong kind for most fields, including big arrays and objects. */
export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: nastyString, weight: 6 },
  { arbitrary: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -0, 1e308, -1, 2 ** 53 + 1)), weight: 3 },
  { arbitrary: fc.constantFrom(true, false, null, [], {}), weight: 3 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 2 },
  { arbitrary: fc.integer({ min: 100, max: 20_000 }).map((n) => Array.from({ length: n }, (_, i) => i)), weight: 1 },
  { arbitrary: fc.integer({ min: 100, max: 5_000 }).map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))), weight: 1 },
);

/** `[[[...]]]` or `{"a":{"a":...}}` nested `depth` deep, as JSON text (built as text: no recursion on either side). */
export function deepJson(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

export const deepNesting: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 50, max: 20_000 }), fc.constantFrom<'array' | 'object'>('array', 'object'))
  .map(([depth, kind]) => deepJson(depth, kind));

/** How a path parameter is sent: a real value, or something hostile, encoded or deliberately not. */
export function pathParam(seeds: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...seeds).map(encode), weight: 4 },
    { arbitrary: nastyString.map(encode), weight: 4 },
    {
      arbitrary: fc.constantFrom('..', '.', '%2F', 'a%2Fb', '%2e%2e', '..%2F..%2Fetc%2Fpasswd', '%00', 'a%00b', '%', '%zz', '%E0%A4%A', '%C0%AF', '%FF%FE', ';x=1', 'a;b', '%20', '+', '~', "'", '!$&()*'),
      weight: 3,
    },
    { arbitrary: fc.integer({ min: 1_000, max: 12_000 }).map((n) => '9'.repeat(n)), weight: 1 },
  );
}

/** A header value as bytes Node's client will send: UTF-8 bytes as latin1, without CR, LF or NUL (the raw-socket test sends those). */
export const headerValue: fc.Arbitrary<string> = nastyString.map((s) =>
  Buffer.from(s.slice(0, 8_000), 'utf8')
    .toString('latin1')
    .replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, ''),
);

/** Content types a client might wrongly send with a body. */
export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 8 },
  {
    arbitrary: fc.constantFrom(
      undefined,
      'application/json; charset=utf-8',
      'application/json; charset=utf-16',
      'application/json; charset=latin1',
      'application/vnd.api+json',
      'text/plain',
      'text/html',
      'application/xml',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/octet-stream',
      '*/*',
      'json',
      'application/json, text/plain',
    ),
    weight: 3,
  },
);
