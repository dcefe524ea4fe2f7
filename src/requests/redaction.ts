import { carriesSecret, decodedPath, secretFieldOf, secretsShown } from '../shared/index.js';

/** What the journal keeps in place of a value that carries a secret. */
export const REDACTED = '[redacted]';

const BACKSLASH = 0x5c;

const FORMS = new WeakMap<readonly string[], readonly string[]>();

/**
 * The tokens of `secrets` as text written by a client may hold them: as they are, escaped
 * as JSON writes them (a token holding `"` or `\`), and percent-encoded as a URL writes
 * them (`+`, `/`, `=` of a base64 token); the longest first, so that a token holding another
 * is replaced whole. Made once per list (the registry keeps its lists).
 */
export function formsOf(secrets: readonly string[]): readonly string[] {
  if (secrets.length === 0) return secrets;
  let forms = FORMS.get(secrets);
  if (forms === undefined) {
    const all = new Set<string>();
    for (const secret of secrets) for (const form of [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)]) all.add(form);
    forms = [...all].sort((a, b) => b.length - a.length);
    FORMS.set(secrets, forms);
  }
  return forms;
}

/** The longest of `secrets`' forms in UTF-8 bytes: how far past a cut a token that starts before it may reach. */
export const reachOf = (secrets: readonly string[]): number => (secrets.length === 0 ? 0 : Buffer.byteLength(formsOf(secrets)[0]!));

/** `text` (a body's or a path's text as sent) with every form of `secrets` replaced. */
export function redactedText(text: string, secrets: readonly string[]): string {
  let shown = text;
  for (const form of formsOf(secrets)) if (shown.includes(form)) shown = shown.split(form).join(REDACTED);
  return shown;
}

/** Whether text as sent holds a form of one of `secrets`. */
export const textCarriesSecret = (text: string, secrets: readonly string[]): boolean => carriesSecret(text, formsOf(secrets));

/**
 * A request's body as the journal keeps it, with the tokens of `secrets` (those its caller
 * may hold, see ClientRegistry.secretsOf) redacted as in its headers: a client may send its
 * own token in a field (`{"api_key": …}`), and the client's read-only tokens read the
 * journal. The body's bytes as sent are searched first (for each token as it is and as
 * JSON escapes it), so a body without a token or an escape (nearly all) is kept as parsed;
 * one with an escape is walked, and copied only if a token is in it.
 */
export function redactedBody(body: unknown, bytes: Uint8Array | undefined, secrets: readonly string[]): unknown {
  if (secrets.length === 0 || body === null || body === undefined) return body;
  // A body with an escape in it (`\/`, `\u…`) may hold a token its bytes do not show: its parsed text is searched then.
  if (bytes !== undefined ? !bytesCarrySecret(bytes, secrets) && !bytes.includes(BACKSLASH) : !textCarriesSecret(JSON.stringify(body), secrets)) return body;
  // Parsed, its escapes undone: the tokens as they are; copied only when one is there.
  return secretFieldOf(body, secrets, '') === undefined ? body : secretsShown(body, secrets, () => REDACTED);
}

/** Whether bytes as sent hold a form of one of `secrets` (as UTF-8). */
export function bytesCarrySecret(bytes: Uint8Array, secrets: readonly string[]): boolean {
  if (secrets.length === 0) return false;
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return formsOf(secrets).some((form) => view.includes(form));
}

/**
 * A request's path (before it is cut to the journal's length, so no token is cut in two)
 * with the tokens of `secrets` redacted (`/v1/order/tracking/<a token>`, sent by mistake).
 * One whose percent-escapes hide a token (in any case of hex, or mixed) is shown decoded,
 * the token redacted.
 */
export function redactedPath(path: string, secrets: readonly string[]): string {
  if (secrets.length === 0) return path;
  const shown = textCarriesSecret(path, secrets) ? redactedText(path, secrets) : path;
  // What is left decoded: a token hidden by other escapes than the forms searched.
  const decoded = decodedPath(shown);
  return decoded !== shown && carriesSecret(decoded, secrets) ? redactedText(decoded, secrets) : shown;
}
