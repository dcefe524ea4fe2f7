import { createHash } from 'node:crypto';

/** Where the docs page and its assets are mounted. */
export const DOCS_PATH = '/docs';
export const ASSETS_PATH = `${DOCS_PATH}/assets`;

/** The two specs the page offers, first one shown first. */
export const DOCS_SPECS = [
  { name: 'Provider API (Shipping Order Service v1)', url: '/__sandbox/openapi.json' },
  { name: 'Sandbox control API (/__sandbox)', url: '/__sandbox/control.openapi.json' },
] as const;

/**
 * The page's Content-Security-Policy: its own origin only, and its one inline script by its
 * hash (Swagger UI's style attributes need inline styles, and its icons data: images).
 */
export function docsCsp(html: string): string {
  const inline = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
  const hash = createHash('sha256').update(inline).digest('base64');
  return `default-src 'self'; script-src 'self' 'sha256-${hash}'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'`;
}

/** The servers the specs name; "Try it out" sends to the page's own origin instead. */
const SPEC_ORIGIN = 'http://127.0.0.1:4010';

/**
 * The HTML of the interactive API reference: Swagger UI from the installed
 * swagger-ui-dist (no CDN), with a dropdown for the two specs. The online validator
 * badge is off, so the page makes no request outside the sandbox.
 */
export function docsPage(): string {
  const config = {
    urls: DOCS_SPECS,
    'urls.primaryName': DOCS_SPECS[0].name,
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    persistAuthorization: true,
    displayRequestDuration: true,
  };
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Shipping Order Sandbox: API reference</title>
  <link rel="stylesheet" href="${ASSETS_PATH}/swagger-ui.css">
  <link rel="icon" type="image/png" href="${ASSETS_PATH}/favicon-32x32.png">
  <style>body { margin: 0; } .swagger-ui .topbar .download-url-wrapper { justify-content: flex-end; }</style>
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${ASSETS_PATH}/swagger-ui-bundle.js"></script>
  <script src="${ASSETS_PATH}/swagger-ui-standalone-preset.js"></script>
  <script>
    const config = ${JSON.stringify(config)};
    window.ui = SwaggerUIBundle(Object.assign(config, {
      presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
      plugins: [SwaggerUIBundle.plugins.DownloadUrl],
      layout: 'StandaloneLayout',
      requestInterceptor: (req) => {
        if (req.url.startsWith(${JSON.stringify(SPEC_ORIGIN)})) req.url = location.origin + req.url.slice(${SPEC_ORIGIN.length});
        return req;
      },
      // Swagger UI warns on any jsonSchemaDialect but its default; ours (JSON Schema 2020-12) is
      // for the server's validators, so the page drops it rather than show a scary box.
      responseInterceptor: (res) => {
        if (config.urls.some((u) => res.url.endsWith(u.url)) && typeof res.text === 'string') {
          const doc = JSON.parse(res.text);
          delete doc.jsonSchemaDialect;
          res.text = res.data = JSON.stringify(doc);
          res.body = res.obj = doc;
        }
        return res;
      },
    }));
  </script>
</body>
</html>
`;
}
