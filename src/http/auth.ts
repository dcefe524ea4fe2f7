import type { IncomingMessage } from 'node:http';
import type { Caller, ClientRegistry } from '../clients/index.js';
import { domainMessages, headerText } from '../shared/index.js';
import { ApiError, messages } from './errors.js';

const challenge = (error?: string) => ({ 'WWW-Authenticate': error ? `Bearer error="${error}"` : 'Bearer' });

/** Who an `Authorization: Bearer <token>` header is (a client's token or an admin token); throws the 401 otherwise. */
export function authenticate(registry: ClientRegistry, header: string | undefined): Caller {
  if (!header) throw new ApiError(401, messages.missingToken, [{ field: 'header.authorization', message: messages.isRequired }], challenge());
  const token = bearerToken(header);
  if (token === undefined) {
    throw new ApiError(401, messages.malformedAuth, [{ field: 'header.authorization', message: 'must be "Bearer <token>"' }], challenge('invalid_request'));
  }
  const caller = registry.callerOf(token);
  if (!caller) throw new ApiError(401, messages.unknownToken, [{ field: 'header.authorization', message: 'unknown token' }], challenge('invalid_token'));
  return caller;
}

/**
 * The request's Authorization header, checked to be given once. Node keeps the first of two
 * and drops the other: of two tokens one would be taken without a word. Two are a 401, as a
 * malformed header is (every secured operation documents it).
 */
export function soleAuthorization(req: IncomingMessage): string | undefined {
  const raw = req.rawHeaders; // name, value, name, value, ...
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 13 && raw[i]!.toLowerCase() === 'authorization') n += 1;
  if (n > 1) throw new ApiError(401, messages.twoAuthorizations, [{ field: 'header.authorization', message: domainMessages.givenOnce }], challenge('invalid_request'));
  return req.headers.authorization;
}

/**
 * Headers that name one thing, by lowercase name: of two, Node joins the sandbox's own into
 * one value ("a, b") that names nothing, and keeps the first Content-Type, reading a body by
 * it that the client may have meant otherwise. A media type is compared without case.
 */
const ONE_VALUED = new Map([
  ['x-sandbox-client', { name: 'X-Sandbox-Client', caseless: false, bit: 1 }],
  ['x-sandbox-scenario', { name: 'X-Sandbox-Scenario', caseless: false, bit: 2 }],
  ['content-type', { name: 'Content-Type', caseless: true, bit: 4 }],
]);
const oneValuedLengths = new Set([...ONE_VALUED.keys()].map((name) => name.length));

/** Whether a one-valued header comes more than once: the common answer, no, costs no allocation. */
function anyRepeated(raw: readonly string[]): boolean {
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) {
    if (!oneValuedLengths.has(raw[i]!.length)) continue;
    const bit = ONE_VALUED.get(raw[i]!.toLowerCase())?.bit ?? 0;
    if (seen & bit) return true;
    seen |= bit;
  }
  return false;
}

/**
 * The request's headers, checked to hold each one-valued header (`X-Sandbox-Client`,
 * `X-Sandbox-Scenario`, `Content-Type`) with one value: two that differ are a 400 naming the
 * header, where the joined value would be refused as a client or scenario the request never
 * named, or the body read as only the first type says. The same value twice means one thing
 * (a Pact verifier repeats a pact's Content-Type) and is kept as that one value.
 */
export function oneValuedHeaders(req: IncomingMessage): IncomingMessage['headers'] {
  const raw = req.rawHeaders; // name, value, name, value, ...
  if (!anyRepeated(raw)) return req.headers;
  let firsts: Map<string, string> | undefined;
  let repeated: string[] | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if (!oneValuedLengths.has(raw[i]!.length)) continue;
    const key = raw[i]!.toLowerCase();
    const header = ONE_VALUED.get(key);
    if (header === undefined) continue;
    const value = trimOws(raw[i + 1]!);
    const first = (firsts ??= new Map()).get(key);
    if (first === undefined) firsts.set(key, value);
    else if (header.caseless ? value.toLowerCase() !== first.toLowerCase() : value !== first) {
      throw new ApiError(400, messages.headerTwice(header.name), [{ field: `header.${key}`, message: domainMessages.givenOnce }]);
    } else (repeated ??= []).push(key);
  }
  for (const key of repeated ?? []) req.headers[key] = firsts!.get(key);
  return req.headers;
}

/** The headers that carry a credential: a token is compared as the bytes the client sent, never decoded (see headerText). */
const CREDENTIAL_HEADER = /^(proxy-)?authorization$/i;
/** A byte above 127 as Node reads it (Latin-1): what may be UTF-8 to decode. */
const HIGH_BYTE = /[\x80-\xff]/;

/**
 * The request's headers as the sandbox reads them: each one-valued header given once
 * (oneValuedHeaders), and each header but the credentials as its client wrote it
 * (headerText), decoded once here, so that every reader (`X-Sandbox-Client`, a fault
 * rule's header match, a count) and the request journal see `Müller`, not Node's
 * Latin-1 reading `MÃ¼ller`.
 */
export function sandboxHeaders(req: IncomingMessage): IncomingMessage['headers'] {
  // Read already: a repeated header would be put back as Node read it, and not decoded again.
  if (decoded.has(req)) return req.headers;
  const headers = oneValuedHeaders(req);
  decodeHeaders(req);
  return headers;
}

/** The requests whose headers were decoded: decoding again would read `Ã©` written as UTF-8 as `é`. */
const decoded = new WeakSet<IncomingMessage>();

/** Decodes the request's headers but the credentials in place (see sandboxHeaders), once per request and once per header (a repeated one is already joined, or kept once). */
function decodeHeaders(req: IncomingMessage): void {
  if (decoded.has(req)) return;
  const raw = req.rawHeaders;
  let beyondAscii: Set<string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if (HIGH_BYTE.test(raw[i + 1]!) && !CREDENTIAL_HEADER.test(raw[i]!)) (beyondAscii ??= new Set()).add(raw[i]!.toLowerCase());
  }
  if (beyondAscii === undefined) return;
  decoded.add(req);
  for (const key of beyondAscii) {
    const value = req.headers[key];
    if (typeof value === 'string') req.headers[key] = headerText(value);
  }
}

/**
 * A header value without the spaces and tabs around it (HTTP's optional whitespace), and
 * nothing else: `trim()` would take U+00A0 too, the Latin-1 reading of the last byte of
 * `à` or `ム` in UTF-8 (see headerText), which is decoded after it.
 */
function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value[start] === ' ' || value[start] === '\t')) start += 1;
  while (end > start && (value[end - 1] === ' ' || value[end - 1] === '\t')) end -= 1;
  return value.slice(start, end);
}

/** The token of an `Authorization: Bearer <token>` header, or undefined when it is not one. */
const bearerToken = (header: string): string | undefined => /^Bearer +(\S+) *$/i.exec(header)?.[1];

/** Per connection, the last Authorization header that authenticated on it and who it named. */
const remembered = new WeakMap<object, { registry: ClientRegistry; header: string; caller: Caller }>();

/**
 * Whether `given` is `known`, in a time that depends on `given`'s length only: a
 * connection may carry several parties' requests (a proxy's keep-alive connection), so
 * how long the comparison takes must tell nothing of the header an earlier request sent.
 */
function sameText(given: string, known: string): boolean {
  let differ = given.length ^ known.length;
  const length = known.length || 1;
  for (let i = 0; i < given.length; i += 1) differ |= given.charCodeAt(i) ^ known.charCodeAt(i % length);
  return differ === 0;
}

/**
 * `authenticate` for a request on `connection` (its socket): a keep-alive connection
 * sends the same Authorization header with each request, so the header that last
 * authenticated on it is remembered with its caller, and the same header again is that
 * caller without hashing the token and comparing it with every configured one. Any other
 * header (another token, none) is authenticated as `authenticate` does, its 401 included.
 */
export function authenticateOn(connection: object, registry: ClientRegistry, header: string | undefined): Caller {
  const last = rememberedCaller(connection, registry, header);
  if (last !== undefined) return last;
  const caller = authenticate(registry, header);
  remembered.set(connection, { registry, header: header!, caller });
  return caller;
}

/**
 * Who a known token on `connection` names, undefined for an unknown one: at once for the
 * header that last authenticated on it (see `authenticateOn`), so a keep-alive
 * connection's JSON bodies are not preceded by a token look-up each.
 */
export function callerOn(connection: object, registry: ClientRegistry, header: string | undefined): Caller | undefined {
  const token = header === undefined ? undefined : bearerToken(header);
  return rememberedCaller(connection, registry, header) ?? (token === undefined ? undefined : registry.callerOf(token));
}

/** The caller of the header that last authenticated on `connection`, when `header` is that one. */
function rememberedCaller(connection: object, registry: ClientRegistry, header: string | undefined): Caller | undefined {
  const last = remembered.get(connection);
  return last !== undefined && header !== undefined && last.registry === registry && sameText(header, last.header) ? last.caller : undefined;
}
