import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type RequestHandler } from 'express';
import type { SandboxModule } from '../module.js';

/** Where the dashboard is mounted. */
export const DASHBOARD_PATH = '/dashboard';

/** The dashboard's own files (HTML, ES modules, CSS): a top-level folder, shipped as is (no build step). */
export const DASHBOARD_DIR = fileURLToPath(new URL('../../../dashboard/', import.meta.url));

/**
 * Nothing but the sandbox's own origin: no inline script or style, no CDN, no eval; and
 * no page of another origin may frame it (clickjacking), nor a base or form lead elsewhere
 * (neither falls back to default-src).
 */
export const DASHBOARD_CSP = "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'";

const resolve = createRequire(import.meta.url).resolve;

/**
 * The UI library's ES modules, straight out of node_modules. The browser cannot resolve
 * the bare `"preact"` import of the hooks module and an import map would be an inline
 * script, so that one specifier is rewritten to the sibling file.
 */
function vendorModules(): Map<string, string> {
  // Each file sits beside the entry point its package exports (htm's export map hides package.json).
  const read = (specifier: string, file: string) => readFileSync(join(dirname(resolve(specifier)), file), 'utf8');
  return new Map([
    ['preact.mjs', read('preact', 'preact.mjs')],
    ['hooks.mjs', read('preact/hooks', 'hooks.mjs').replace(/from\s*"preact"/g, 'from"./preact.mjs"')],
    ['htm.mjs', read('htm', 'htm.mjs')],
  ]);
}

const secured: RequestHandler = (_req, res, next) => {
  res.set({ 'Content-Security-Policy': DASHBOARD_CSP, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' });
  next();
};

/**
 * The dashboard at `/dashboard`: Preact with htm, no build step, built only on the
 * control and provider APIs (the browser sends the token it was given). The page
 * itself needs no token.
 *
 * @example sandboxModules = (services) => [dashboardModule(), ...]
 */
export function dashboardModule(): SandboxModule {
  const vendor = vendorModules();
  const index = readFileSync(join(DASHBOARD_DIR, 'index.html'), 'utf8');
  return {
    name: 'dashboard',
    routes(app) {
      app.use(DASHBOARD_PATH, secured);
      app.get([DASHBOARD_PATH, `${DASHBOARD_PATH}/`, `${DASHBOARD_PATH}/index.html`], (_req, res) => {
        res.type('html').set('Cache-Control', 'no-cache').send(index);
      });
      app.get(`${DASHBOARD_PATH}/vendor/:file`, (req, res, next) => {
        const source = vendor.get(req.params.file);
        if (source === undefined) return next();
        res.type('text/javascript').set('Cache-Control', 'max-age=3600').send(source);
      });
      app.use(`${DASHBOARD_PATH}/app`, express.static(DASHBOARD_DIR, { index: false, fallthrough: true, setHeaders: (res) => res.set('Cache-Control', 'no-cache') }));
    },
  };
}
