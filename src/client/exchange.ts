import { formatDuration, readableFailure } from '../shared/index.js';

/**
 * The headers of a client command's request: its bearer token and, for an admin acting for
 * `client`, X-Sandbox-Client in UTF-8 as curl sends it (fetch takes a header value only
 * as bytes, one per character).
 */
export function callerHeaders(token: string, client: string | undefined): Record<string, string> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (client !== undefined && client !== '') headers['x-sandbox-client'] = Buffer.from(client, 'utf8').toString('latin1');
  return headers;
}

/** A whole answer of the sandbox: its status and its body, read to the end. */
export interface Answer {
  status: number;
  ok: boolean;
  text: string;
}

/** The sandbox (or whatever listens at --url) did not answer in full within the command's --timeout. */
export class NoAnswer extends Error {}

/** `ms` as --timeout takes it back: `30s`, `1m30s`, `200ms`, `1500ms` (formatDuration would round that one to seconds). */
const shown = (ms: number): string => (ms % 1000 === 0 ? formatDuration(ms) : `${ms}ms`);

/**
 * The requests of one client command, sharing one deadline: `timeoutMs` bounds the whole
 * command (every page `deliveries list` walks, both reads of `report`), headers and bodies
 * alike, so that a sandbox that takes the connection and never answers cannot hold a CI job.
 * A request the deadline cuts throws NoAnswer; one that fails otherwise throws fetch's error.
 *
 * @example
 * const send = withDeadline(30_000);
 * const { status, ok, text } = await send(new URL('/__sandbox/report', options.url), { headers });
 */
export function withDeadline(timeoutMs: number): (url: URL, init?: RequestInit) => Promise<Answer> {
  const signal = AbortSignal.timeout(timeoutMs);
  return async (url, init = {}) => {
    try {
      const res = await fetch(url, { ...init, signal });
      return { status: res.status, ok: res.ok, text: await res.text() };
    } catch (error) {
      if (signal.aborted) throw new NoAnswer(`no answer from ${url.origin} within ${shown(timeoutMs)}`);
      throw error;
    }
  };
}

/** A request that failed, as a client command prints it: the deadline's line, or the error's message with its cause (`fetch failed (connect ECONNREFUSED 127.0.0.1:9)`). */
export function failure(error: unknown): string {
  const { message, cause } = (error ?? {}) as { message?: unknown; cause?: { message?: unknown } };
  if (error instanceof NoAnswer || typeof cause?.message !== 'string') return String(message ?? error);
  return `${String(message)} (${readableFailure(cause.message, 'sandbox')})`;
}

/** Whether a connection failed as an https:// (wss://) URL to a server that speaks plain http fails: OpenSSL reads its answer as a wrong version number. */
export const isWrongVersion = (error: Error): boolean => (error as NodeJS.ErrnoException).code === 'ERR_SSL_WRONG_VERSION_NUMBER' || /wrong version number/.test(error.message);

/** A body's JSON, or undefined when it is none (a proxy's page): each command then checks the shape it reads. */
export function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** What a client command says when whatever answers at --url gave a body that no sandbox gives (a proxy's page, another service): exit 2. */
export const notASandbox = (url: string, status: number, what: string): string => `${url} answered ${status} with ${what}: is it a shipping sandbox?`;

/** Thrown where a command's answer is no sandbox's (see notASandbox): printed as its message, exit 2. */
export class NotASandbox extends Error {}
