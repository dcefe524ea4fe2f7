import type { RequestHandler } from 'express';
import type { Caller, Client, ClientRegistry } from '../clients/index.js';
import type { CompiledOperation } from '../spec/index.js';
import { authenticate } from './auth.js';
import { ApiError, messages } from './errors.js';
import { sendError } from './respond.js';

/**
 * What an operation acts on, from its `x-sandbox-scope` in the spec: `client` (the
 * default: the caller's own data), `sandbox` (the whole sandbox: admin only) or `caller`
 * (the token itself, `GET /__sandbox/whoami`: as `client`, but an admin need not name one).
 */
export type Scope = 'client' | 'sandbox' | 'caller';

export const scopeOf = (op: Pick<CompiledOperation, 'definition' | 'path'>): Scope => {
  // As x-sandbox-read, the mark counts only under /__sandbox/: a provider spec given with --spec cannot change who may call its paths.
  const scope = op.path.startsWith('/__sandbox/') ? op.definition['x-sandbox-scope'] : undefined;
  return scope === 'sandbox' || scope === 'caller' ? scope : 'client';
};

/** Methods that only read. */
export const isReadMethod = (method: string): boolean => ['GET', 'HEAD', 'OPTIONS'].includes(method.toUpperCase());

/**
 * Whether an operation only reads: a read method, or a sandbox operation the control spec
 * marks `x-sandbox-read: true` (a question too large for a query, asked in a body: counting
 * journaled requests). The only operations a read_only token may use. The mark counts only
 * under `/__sandbox/`: a provider spec given with `--spec` cannot open a write to read_only.
 */
export const isReadOperation = (op: Pick<CompiledOperation, 'method' | 'definition' | 'path'>): boolean =>
  isReadMethod(op.method) || (op.definition['x-sandbox-read'] === true && op.path.startsWith('/__sandbox/'));

export const ACT_FOR_HEADER = 'x-sandbox-client';
const actForField = `header.${ACT_FOR_HEADER}`;

/**
 * Whether the sandbox-wide operations are open to clients: only in a sandbox with no
 * admin token and exactly one client (the laptop and CI case), which keeps doing everything.
 */
export const sandboxWideOpenToClients = (registry: ClientRegistry): boolean => !registry.hasAdmin && registry.clientIds.length === 1;

/**
 * The one check of what a caller may do, for every operation of both specs: from the
 * operation's method and scope and the caller's role. Returns the client the request
 * acts for: the caller's own, or for an admin the one `X-Sandbox-Client` names
 * (undefined on a sandbox-wide operation without it). Throws the 403 or 400.
 *
 * @example authorize(registry, op, { role: 'read_only', client }, headers) // throws 403 on a POST
 */
export function authorize(registry: ClientRegistry, op: Pick<CompiledOperation, 'method' | 'definition' | 'path'>, caller: Caller, headers: Record<string, unknown>): Client | undefined {
  if (caller.role === 'read_only' && !isReadOperation(op)) throw new ApiError(403, messages.readOnly, [{ field: 'header.authorization', message: 'is a read_only token' }]);
  const named = typeof headers[ACT_FOR_HEADER] === 'string' ? (headers[ACT_FOR_HEADER] as string).trim() : undefined;
  const sandboxWide = scopeOf(op) === 'sandbox';
  if (sandboxWide && caller.role !== 'admin' && !sandboxWideOpenToClients(registry)) {
    throw new ApiError(403, messages.adminOnly, [{ field: 'header.authorization', message: `is a ${caller.role} token, not an admin token` }]);
  }
  if (caller.role !== 'admin') {
    if (named !== undefined && named !== '' && named !== caller.client.id) throw new ApiError(400, messages.notYourClient, [{ field: actForField, message: 'names another client' }]);
    return caller.client;
  }
  const ids = registry.clientIds;
  if (named === undefined || named === '') {
    if (sandboxWide) return undefined;
    if (ids.length === 1) return registry.byId(ids[0]!);
    if (scopeOf(op) === 'caller') return undefined;
    throw new ApiError(400, messages.actForWhom(ids), [{ field: actForField, message: 'is required with an admin token' }]);
  }
  const client = registry.byId(named);
  if (!client) throw new ApiError(400, messages.unknownClient(named, ids), [{ field: actForField, message: 'names no client of this sandbox' }]);
  return client;
}

/**
 * Refuses unless `authorization` is an admin token; lets everything through when no
 * admin token is configured. For sandbox-wide endpoints served outside the specs'
 * pipeline, such as `GET /__sandbox/metrics` (answered to the admin, or to anyone
 * without an admin token). Throws the 401 or 403.
 */
export function checkAdminOnly(registry: ClientRegistry, authorization: string | undefined): void {
  if (!registry.hasAdmin) return;
  const token = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1];
  const caller = token === undefined ? undefined : registry.callerOf(token);
  if (caller === undefined) authenticate(registry, authorization); // throws the 401 it deserves
  if (caller?.role !== 'admin') throw new ApiError(403, messages.adminOnly, [{ field: 'header.authorization', message: 'is not an admin token' }]);
}

/**
 * `checkAdminOnly` as express middleware: answers the 401/403 envelope itself.
 *
 * @example app.get('/__sandbox/metrics', adminOnly(services.registry), serveMetrics)
 */
export function adminOnly(registry: ClientRegistry): RequestHandler {
  return (req, res, next) => {
    try {
      checkAdminOnly(registry, req.headers.authorization);
    } catch (error) {
      return sendError(res, error);
    }
    next();
  };
}
