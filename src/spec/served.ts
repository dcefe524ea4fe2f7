import type { OpenApiDocument } from './load.js';

/**
 * A spec as the sandbox serves it: `servers` names the address it was fetched from
 * (the request's scheme and Host), so generated clients and "Try it out" call this
 * sandbox whatever its host and port.
 *
 * @example servedSpec(document, 'http://127.0.0.1:4321').servers // [{ url: 'http://127.0.0.1:4321', ... }]
 */
export function servedSpec(document: OpenApiDocument, baseUrl: string): OpenApiDocument {
  return { ...document, servers: [{ url: baseUrl, description: 'This sandbox (the address this spec was fetched from)' }] };
}

/** Where the servers go in a spec's JSON text: a string no spec holds. */
const SERVERS_MARK = '\u0000servers\u0000';
/** Each served spec's JSON text, split where its servers go. */
const texts = new WeakMap<OpenApiDocument, [string, string]>();

/**
 * `servedSpec` as JSON text, the same text `JSON.stringify` gives, with the document
 * serialized once: a spec is about 100 KB of JSON, and its endpoints need no token, so
 * serializing it per request let anyone's loop of GETs slow every partner's requests.
 */
export function servedSpecText(document: OpenApiDocument, baseUrl: string): string {
  let parts = texts.get(document);
  if (parts === undefined) {
    const text = JSON.stringify({ ...document, servers: SERVERS_MARK });
    const at = text.indexOf(JSON.stringify(SERVERS_MARK));
    parts = [text.slice(0, at), text.slice(at + JSON.stringify(SERVERS_MARK).length)];
    texts.set(document, parts);
  }
  return `${parts[0]}${JSON.stringify(servedSpec(document, baseUrl).servers)}${parts[1]}`;
}
