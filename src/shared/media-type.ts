import contentType from 'content-type';

/**
 * How the API reads a request body's headers, in one place: the HTTP edge reads and
 * refuses bodies by them, and a fault rule whose criteria only refused requests meet is
 * refused by them (such a rule would never fire).
 */

/** The content encodings of request bodies the sandbox decodes ('' and identity: none). */
export const BODY_ENCODINGS: ReadonlySet<string> = new Set(['', 'identity', 'gzip', 'deflate', 'br']);

/** Whether a Content-Type is JSON's, as the API reads bodies: application/json, application/*+json (parameters or none). */
export const isJsonType = (type: string | undefined): boolean => type !== undefined && /^application\/([\w.+-]*\+)?json\b/i.test(type);

/**
 * The charset a Content-Type names, lower case; utf-8 when it names none (JSON's own). Read
 * from a header content-type cannot parse too (`application/json; charset=utf-16; x`): a
 * charset named there is still the body's.
 */
export function charsetOf(type: string | undefined): string {
  try {
    return (contentType.parse(type ?? '').parameters.charset ?? 'utf-8').toLowerCase();
  } catch {
    return (/;\s*charset\s*=\s*"?([^";\s]+)/i.exec(type ?? '')?.[1] ?? 'utf-8').toLowerCase();
  }
}

/**
 * Whether a request says it carries a body: chunked, or a Content-Length above 0. What the
 * API checks a body's media type and presence by, and what the report and the upgrade
 * answer read; the edge reads a body by body-parser's own rule (any Content-Length).
 */
export const declaresABody = (headers: { 'transfer-encoding'?: unknown; 'content-length'?: unknown }): boolean =>
  headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;

/** Whether a charset is UTF-8 (`utf8` is one of its labels, WHATWG Encoding). */
export const isUtf8Charset = (charset: string): boolean => charset === 'utf-8' || charset === 'utf8';

/** Whether a body of this Content-Type gets past the edge: JSON in UTF-8. Any other is answered 415. */
export const isTakenContentType = (type: string | undefined): boolean => isJsonType(type) && isUtf8Charset(charsetOf(type));
