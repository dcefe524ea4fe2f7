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

/**
 * A JSON value with each text in it that carries one of `secrets` (a string, or a number's
 * digits) shown as `shown(text)`, and each field name that carries one as `shown(name) N`
 * (N its place among the fields, so that two names shown alike stay apart); the rest as it
 * is. A copy is built field by field, so a field named `__proto__` stays a field.
 */
export function secretsShown(value: unknown, secrets: readonly string[], shown: (text: string) => string): unknown {
  if (typeof value === 'string') return carriesSecret(value, secrets) ? shown(value) : value;
  if (typeof value === 'number') return carriesSecret(String(value), secrets) ? shown(String(value)) : value;
  if (Array.isArray(value)) return value.map((element) => secretsShown(element, secrets, shown));
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, unknown> = {};
  let place = 0;
  for (const [name, field] of Object.entries(value)) {
    place += 1;
    const key = carriesSecret(name, secrets) ? `${shown(name)} ${place}` : name;
    Object.defineProperty(copy, key, { value: secretsShown(field, secrets, shown), enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/**
 * Where in a JSON value the first text, number's digits or field name that carries one of
 * `secrets` is, written from `field` as a request's field is named (`match.body.k`,
 * `action.body.m[0]`); undefined if none does. The value is only read, never copied: a
 * caller asks this before `secretsShown` builds a copy.
 */
export function secretFieldOf(value: unknown, secrets: readonly string[], field: string): string | undefined {
  const at = secretAt(value, secrets);
  return at === undefined ? undefined : at.reduceRight<string>((name, step) => (typeof step === 'number' ? `${name}[${step}]` : `${name}.${step}`), field);
}

/** The steps to the first value or field name in `value` that carries one of `secrets`, outermost last. */
function secretAt(value: unknown, secrets: readonly string[]): Array<string | number> | undefined {
  if (typeof value === 'string' || typeof value === 'number') return carriesSecret(String(value), secrets) ? [] : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const at = secretAt(value[i], secrets);
      if (at !== undefined) return [...at, i];
    }
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  for (const [name, element] of Object.entries(value)) {
    const at = carriesSecret(name, secrets) ? [] : secretAt(element, secrets);
    if (at !== undefined) return [...at, name];
  }
  return undefined;
}

/**
 * A path with its percent-escapes decoded, each run of them on its own; in a run that is no
 * UTF-8 (`%61%FF`), its ASCII escapes one by one, the rest left as they are: what a token
 * in it reads as.
 */
export function decodedPath(path: string): string {
  if (!path.includes('%')) return path;
  return path.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run.replace(/%([0-7][0-9a-fA-F])/g, (_escape, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    }
  });
}
