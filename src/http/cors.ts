import type { RequestHandler } from 'express';
import { ApiError } from './errors.js';
import { sendError } from './respond.js';

/** Methods a browser may send, across both APIs. */
export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
/** Request headers a browser may send: the token, JSON, Prism's Prefer, and the sandbox's own. */
export const CORS_HEADERS = ['Authorization', 'Content-Type', 'Prefer', 'X-Sandbox-Scenario', 'X-Sandbox-Webhook-Chaos'];
/** Response headers a browser script may read. */
export const CORS_EXPOSED = ['WWW-Authenticate', 'Preference-Applied', 'Allow', 'Retry-After', 'Location'];
const MAX_AGE_S = 600;

export const corsMessages = {
  origin: (origin: string) => `Origin ${origin} is not allowed: start the sandbox with --cors-origins listing it (or "*" for any origin).`,
} as const;

/**
 * The CORS policy of both APIs. `origins` is `['*']` (any origin, the default: a
 * sandbox is used from browser tools on any address), a list of exact origins, or
 * empty (no CORS headers: browsers block cross-origin calls). Tokens travel in the
 * Authorization header, never in cookies, so credentials are not allowed.
 *
 * A preflight (OPTIONS with `Access-Control-Request-Method`) from an allowed origin
 * answers 204 with the methods and headers; from another origin, 403 with the envelope.
 *
 * @example app.use(cors(['https://tools.example.com']))
 */
export function cors(origins: string[]): RequestHandler {
  const any = origins.includes('*');
  const allowed = new Set(origins.map((o) => o.replace(/\/+$/, '').toLowerCase()));
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (!origin || origins.length === 0) return next();
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    if (!any) res.vary('Origin');
    if (!any && !allowed.has(origin.toLowerCase())) {
      if (preflight) return sendError(res, new ApiError(403, corsMessages.origin(origin), [{ field: 'header.origin', message: 'is not an allowed origin' }]));
      return next();
    }
    res.setHeader('Access-Control-Allow-Origin', any ? '*' : origin);
    if (!preflight) {
      res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSED.join(', '));
      return next();
    }
    // Any X-Sandbox-* header the browser asks for is allowed too, so new sandbox headers need no change here.
    const asked = String(req.headers['access-control-request-headers'] ?? '')
      .split(',')
      .map((h) => h.trim())
      .filter((h) => /^x-sandbox-[\w-]+$/i.test(h) && !CORS_HEADERS.some((known) => known.toLowerCase() === h.toLowerCase()));
    res.setHeader('Access-Control-Allow-Methods', CORS_METHODS.join(', '));
    res.setHeader('Access-Control-Allow-Headers', [...CORS_HEADERS, ...asked].join(', '));
    res.setHeader('Access-Control-Max-Age', String(MAX_AGE_S));
    res.status(204).end();
  };
}
