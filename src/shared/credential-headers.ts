/**
 * Request headers whose value is a credential: the request journal keeps them
 * `[redacted]`, and a fault rule that matches on one shows it masked (so is a value carrying a
 * token, see `carriesSecret`, in both). One list for both, so that no answer shows a
 * credential that another hides.
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
 * Whether a header's or parameter's value (or name) carries one of `secrets` (the tokens
 * an answer hides wherever they appear, see ClientRegistry.secretsOf), whatever its name:
 * a client or its gateway may repeat a token in a header of its own.
 */
export function carriesSecret(value: string | readonly string[], secrets: readonly string[]): boolean {
  for (const secret of secrets) if (typeof value === 'string' ? value.includes(secret) : value.some((v) => String(v).includes(secret))) return true;
  return false;
}
