// The only way the dashboard reaches the sandbox: the control API and the provider API,
// with the token given at sign-in as a bearer token, exactly as a client would call them.

const TOKEN_KEY = 'sandbox-dashboard-token';
const CLIENT_KEY = 'sandbox-dashboard-client';
const WHO_KEY = 'sandbox-dashboard-who';
const GONE_KEY = 'sandbox-dashboard-client-gone';

/** The token of this tab (sessionStorage: gone when the tab closes). */
export const session = {
  get token() {
    return sessionStorage.getItem(TOKEN_KEY);
  },
  signIn(token) {
    sessionStorage.setItem(TOKEN_KEY, token);
  },
  signOut() {
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.removeItem(CLIENT_KEY);
    sessionStorage.removeItem(WHO_KEY);
    sessionStorage.removeItem(GONE_KEY);
  },
  /** What the token is, as GET /__sandbox/whoami said at sign-in: `{role, sandbox_wide}`; null when not known. */
  get who() {
    try {
      return JSON.parse(sessionStorage.getItem(WHO_KEY));
    } catch {
      return null;
    }
  },
  know({ role, sandbox_wide }) {
    sessionStorage.setItem(WHO_KEY, JSON.stringify({ role, sandbox_wide }));
  },
  /** The client an admin token acts for (sent as X-Sandbox-Client); null for a client's own token. */
  get client() {
    return sessionStorage.getItem(CLIENT_KEY);
  },
  actFor(clientId) {
    if (clientId) sessionStorage.setItem(CLIENT_KEY, clientId);
    else sessionStorage.removeItem(CLIENT_KEY);
    sessionStorage.removeItem(GONE_KEY);
  },
  /** The client the admin acted for until the sandbox said it has no such client (restarted without it); null otherwise. */
  get goneClient() {
    return sessionStorage.getItem(GONE_KEY);
  },
  clientGone(clientId) {
    sessionStorage.removeItem(CLIENT_KEY);
    sessionStorage.setItem(GONE_KEY, clientId);
  },
};

/** The event sent once the client an admin acted for is found gone and forgotten (its detail: the client's id). */
export const CLIENT_GONE = 'sandbox-client-gone';

/** Sandbox-wide reads: they act for no client, so the chosen one is not sent (one no longer in the sandbox would get them a 400). */
const SANDBOX_WIDE = new Set(['/__sandbox/clients', '/__sandbox/whoami']);

/** Whether an answer is the sandbox's 400 for an X-Sandbox-Client that names no client (or none, where one is needed). */
const refusesClient = (status, body) => status === 400 && Array.isArray(body?.errors) && body.errors.some((e) => e?.field === 'header.x-sandbox-client');

/** Whether the token may change things: every role but read_only (and a token whose role is not known). */
export const mayWrite = () => session.who?.role !== 'read_only';

/** Whether it may also change what is the whole sandbox's (the clock's speed): an admin, or the only client of a sandbox without one. */
export const mayWriteSandboxWide = () => mayWrite() && session.who?.sandbox_wide !== false;

/** An answer that was not 2xx, carrying the sandbox's error envelope (`message`, `errors`). */
export class ApiError extends Error {
  constructor(method, path, status, body) {
    // The envelope's message; any other body (a fault rule's own, a proxy's page) shown as it came, cut short.
    const shown = typeof body === 'string' ? body : body === null || body === undefined ? '' : JSON.stringify(body);
    const message = body && typeof body.message === 'string' ? body.message : shown.length > 300 ? `${shown.slice(0, 300)}…` : shown || 'no body';
    super(message);
    this.request = `${method} ${path}`;
    this.status = status;
    // Only field errors of the envelope's shape: a fault rule's body may hold anything there.
    this.errors = body && Array.isArray(body.errors) ? body.errors.filter((e) => e !== null && typeof e === 'object') : [];
    /** The body the sandbox answered (parsed JSON, or text), when it answered (status not 0). */
    this.body = status === 0 ? undefined : body;
  }
}

/** The event a 401 to the signed-in token sends (its detail: the ApiError), once the token is forgotten. */
export const TOKEN_REFUSED = 'sandbox-token-refused';

/** How long a call waits for its answer: a partner's fault rule may hold one (a hang) for as long as it likes. */
export const CALL_TIMEOUT_MS = 15_000;

/**
 * Calls the sandbox and answers `{ status, body }` for a 2xx; throws an ApiError otherwise.
 * `token` overrides the signed-in one (the sign-in form checks a token before keeping it);
 * `signal` ends the call early (a view that is left); `timeoutMs` gives a call that may
 * take long (the checks) more than CALL_TIMEOUT_MS. A redirect is an error, never
 * followed: a followed redirect would carry the token to wherever it points. Nothing is
 * taken from the browser's cache.
 */
export async function call(method, path, { body, headers = {}, token = session.token, signal, timeoutMs = CALL_TIMEOUT_MS } = {}) {
  const timeout = AbortSignal.timeout(timeoutMs);
  const init = { method, redirect: 'manual', cache: 'no-store', signal: signal ? AbortSignal.any([signal, timeout]) : timeout, headers: { Accept: 'application/json', ...headers } };
  if (token) init.headers.Authorization = `Bearer ${token}`;
  const actingFor = token === session.token && !SANDBOX_WIDE.has(path.split('?')[0]) && !('X-Sandbox-Client' in headers) ? session.client : null;
  // As UTF-8 bytes, as curl sends it: fetch refuses a header value beyond Latin-1 (a client id such as 佐藤).
  if (actingFor) init.headers['X-Sandbox-Client'] = String.fromCharCode(...new TextEncoder().encode(actingFor));
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  let text;
  try {
    response = await fetch(path, init);
    text = await response.text();
  } catch (error) {
    if (signal?.aborted) throw error;
    if (timeout.aborted) throw new ApiError(method, path, 0, { message: `No answer after ${timeoutMs / 1000} s: the sandbox may still be working on it, or a fault rule is holding it (see Faults in the control API)` });
    throw new ApiError(method, path, 0, { message: `The sandbox did not answer: ${error.message}` });
  }
  if (response.type === 'opaqueredirect') throw new ApiError(method, path, 0, { message: 'The answer was a redirect, not followed: the dashboard sends its token to the sandbox only' });
  let parsed = text;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  if (!response.ok) {
    const error = new ApiError(method, path, response.status, parsed);
    // The signed-in token is no longer accepted (rotated, or the sandbox started with other tokens): back to the sign-in form, saying why.
    // Only the sandbox's own calls say so: a provider path's 401 may be a partner's fault rule, with a body of its choosing.
    if (response.status === 401 && token !== null && token === session.token && path.startsWith('/__sandbox/')) {
      session.signOut();
      dispatchEvent(new CustomEvent(TOKEN_REFUSED, { detail: error }));
    }
    // The client the admin acts for is no longer in the sandbox (restarted without it): forgotten, so the picker offers the others.
    // Only the sandbox's own calls say so, as for the 401 above.
    if (actingFor && actingFor === session.client && path.startsWith('/__sandbox/') && refusesClient(response.status, parsed)) {
      session.clientGone(actingFor);
      dispatchEvent(new CustomEvent(CLIENT_GONE, { detail: actingFor }));
    }
    throw error;
  }
  return { status: response.status, body: parsed, text };
}

/** A query string of the non-empty values. */
export function query(params) {
  const entries = Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== '');
  return entries.length === 0 ? '' : `?${new URLSearchParams(entries).toString()}`;
}
