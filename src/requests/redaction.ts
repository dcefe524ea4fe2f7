import { carriesSecret } from '../shared/index.js';

/** What the journal keeps in place of a value that carries a secret. */
export const REDACTED = '[redacted]';

/** `text` with every occurrence of `secrets` replaced (called once one is known to be there). */
export function redactedText(text: string, secrets: readonly string[]): string {
  let shown = text;
  // The longest first: a token that holds another is replaced whole, not around the other's replacement.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) if (shown.includes(secret)) shown = shown.split(secret).join(REDACTED);
  return shown;
}

/** `value` with each string carrying a secret redacted, and each field name carrying one as `[redacted] N` (N its place), none lost. */
function redactedValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return carriesSecret(value, secrets) ? REDACTED : value;
  if (Array.isArray(value)) return value.map((element) => redactedValue(element, secrets));
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, unknown> = {};
  let place = 0;
  for (const [name, field] of Object.entries(value)) {
    place += 1;
    const shown = carriesSecret(name, secrets) ? `${REDACTED} ${place}` : name;
    // A parsed body may hold a field named `__proto__`: assigned, it would set no field.
    Object.defineProperty(copy, shown, { value: redactedValue(field, secrets), enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/**
 * A request's body as the journal keeps it, with the tokens of `secrets` (those its caller
 * may hold, see ClientRegistry.secretsOf) redacted as in its headers: a client may send its
 * own token in a field (`{"api_key": …}`), and the client's read-only tokens read the
 * journal. The body's bytes as sent are searched first, so a body without a token (nearly
 * all) costs one search per token and is kept as parsed. A token written with JSON escapes
 * is not found there: a client that escapes its own token means to send it so.
 */
export function redactedBody(body: unknown, bytes: Uint8Array | undefined, secrets: readonly string[]): unknown {
  if (secrets.length === 0 || body === null || body === undefined) return body;
  if (bytes !== undefined ? !bytesCarrySecret(bytes, secrets) : !carriesSecret(JSON.stringify(body), secrets)) return body;
  return redactedValue(body, secrets);
}

/** Whether a body's bytes as sent hold one of `secrets` (as UTF-8). */
export function bytesCarrySecret(bytes: Uint8Array, secrets: readonly string[]): boolean {
  if (secrets.length === 0) return false;
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return secrets.some((secret) => view.includes(secret));
}

/** A request's path (before it is cut to the journal's length, so no token is cut in two) with the tokens of `secrets` redacted (`/v1/order/tracking/<a token>`, sent by mistake). */
export function redactedPath(path: string, secrets: readonly string[]): string {
  return secrets.length === 0 || !carriesSecret(path, secrets) ? path : redactedText(path, secrets);
}
