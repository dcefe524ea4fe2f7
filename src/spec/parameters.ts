import { deref, type OpenApiDocument } from './load.js';

/** An operation's parameter, as compiling reads it. */
export interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  style?: string;
}

/** A parameter with where its definition sits in the document (a JSON pointer, for Ajv's $ref). */
export type LocatedParameter = { p: ParameterObject; ref: string };

/** The schema of an operation's parameters in one place (path, query or header), as one object; undefined when it has none. */
export function paramsSchema(base: string, params: readonly LocatedParameter[], where: ParameterObject['in']) {
  const chosen = params.filter(({ p }) => p.in === where);
  if (chosen.length === 0) return undefined;
  const key = (p: ParameterObject) => (where === 'header' ? p.name.toLowerCase() : p.name);
  return {
    type: 'object',
    properties: Object.fromEntries(chosen.map(({ p, ref }) => [key(p), { $ref: `${base}${ref}/schema` }])),
    required: chosen.filter(({ p }) => p.required || where === 'path').map(({ p }) => key(p)),
  };
}

/** The `pattern` of each path parameter whose schema has one, by name. */
export function pathPatternsOf(document: OpenApiDocument, params: readonly LocatedParameter[]): Record<string, string> {
  return Object.fromEntries(
    params.flatMap(({ p }) => {
      const pattern = p.in === 'path' ? (deref(document, (p as { schema?: unknown }).schema) as { pattern?: unknown } | undefined)?.pattern : undefined;
      return typeof pattern === 'string' ? [[p.name, pattern]] : [];
    }),
  );
}
