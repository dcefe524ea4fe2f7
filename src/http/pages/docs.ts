import { dirname } from 'node:path';
import { createRequire } from 'node:module';
import express from 'express';
import type { SandboxModule } from '../module.js';
import { ASSETS_PATH, DOCS_PATH, docsCsp, docsPage } from './docs-page.js';

/** The folder of the installed swagger-ui-dist package (its built assets). */
export function swaggerUiDir(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

/**
 * The interactive API reference at `/docs`, rendered from both specs, working with
 * no internet: the Swagger UI assets are served from `/docs/assets`, straight out of
 * node_modules. No token is needed to read it.
 *
 * @example sandboxModules = (services) => [docsModule(), ...]
 */
export function docsModule(): SandboxModule {
  const html = docsPage();
  const csp = docsCsp(html);
  return {
    name: 'docs',
    routes(app) {
      app.get([DOCS_PATH, `${DOCS_PATH}/`, `${DOCS_PATH}/index.html`], (_req, res) => {
        // Tokens typed into "Authorize" stay in this origin's storage: no script but the page's own may run here.
        res.type('html').set({ 'Cache-Control': 'no-cache', 'Content-Security-Policy': csp, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' }).send(html);
      });
      app.use(ASSETS_PATH, express.static(swaggerUiDir(), { index: false, maxAge: '1h', fallthrough: true }));
    },
  };
}
