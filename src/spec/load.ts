import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';

/** The spec folder shipped with the package. */
export const SPEC_DIR = fileURLToPath(new URL('../../spec/', import.meta.url));
export const PROVIDER_SPEC = `${SPEC_DIR}openapi.yaml`;
export const CONTROL_SPEC = `${SPEC_DIR}sandbox-control.yaml`;

/** An OpenAPI 3.1 document, kept as plain JSON. */
export type OpenApiDocument = Record<string, unknown> & { paths?: Record<string, Record<string, unknown>> };

/**
 * Reads an OpenAPI document from YAML or JSON. With js-yaml: it reads the two specs in
 * ~0.1 s where the `yaml` package took ~0.7 s, paid at every start of the sandbox.
 */
export function loadSpec(path: string): OpenApiDocument {
  let document: unknown;
  try {
    document = load(readFileSync(path, 'utf8'), { filename: path });
  } catch (error) {
    throw new Error(`${path} is not valid YAML or JSON: ${(error as Error).message}`);
  }
  if (typeof document !== 'object' || document === null || !('openapi' in document)) {
    throw new Error(`${path} is not an OpenAPI document (no "openapi" field).`);
  }
  return document as OpenApiDocument;
}

/** Follows a local `$ref` ("#/components/...") once; other values are returned as they are. */
export function deref<T>(document: OpenApiDocument, value: T): T {
  const ref = (value as { $ref?: unknown } | undefined)?.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return value;
  let node: unknown = document;
  for (const part of ref.slice(2).split('/')) {
    node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  if (node === undefined) throw new Error(`Unresolved $ref ${ref}`);
  return deref(document, node as T);
}

/** Escapes one JSON-pointer segment. */
export const pointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');
