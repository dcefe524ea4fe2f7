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
