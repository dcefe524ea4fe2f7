/**
 * Request headers whose value is a credential: the request journal keeps them (and any
 * other header or parameter carrying the request's token, see `carriesToken`)
 * `[redacted]`, and a fault rule that matches on one shows it masked. One list for both, so
 * that no answer shows a credential that another hides.
 */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-api-key',
  // What gateways and clients repeat a token in (ESPv2's forwarded one, common token headers).
  'x-forwarded-authorization',
  'x-auth-token',
  'x-access-token',
  'x-amz-security-token',
]);

/** Shortest token looked for in other headers' values: a shorter one would match ordinary text and hide it. */
export const TOKEN_IN_VALUE_MIN = 8;

/**
 * Whether a header's or parameter's value carries `token` (the request's own bearer token),
 * whatever its name: a client or its gateway may repeat the token in a header of its own.
 */
export const carriesToken = (value: string | readonly string[], token: string | undefined): boolean =>
  token !== undefined && token.length >= TOKEN_IN_VALUE_MIN && (typeof value === 'string' ? value.includes(token) : value.some((v) => String(v).includes(token)));
