import fc from 'fast-check';
import { deref, type OpenApiDocument } from '../../src/spec/load.js';
import type { CompiledOperation } from '../../src/spec/compile.js';
import { bodyText } from './bodies.js';
import type { RawRequest } from './http-client.js';
import { contentType, encode, headerValue, nastyString, pathParam } from './values.js';

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
  schema?: { example?: unknown; default?: unknown; enum?: unknown[] };
}

/** Known-good values the test adds to the spec's examples (real order numbers, delivery ids ...), by parameter name or operationId. */
export interface Seeds {
  params: Record<string, string[]>;
  bodies: Record<string, unknown[]>;
}

/** The tokens a case may use: the operation's client, another client, and bad ones. */
export interface Tokens {
  own: string;
  other: string;
}

function parametersOf(document: OpenApiDocument, op: CompiledOperation): Parameter[] {
  const item = (document.paths?.[op.path] ?? {}) as { parameters?: unknown[] };
  return [...(item.parameters ?? []), ...((op.definition.parameters as unknown[]) ?? [])].map((p) => deref(document, p) as Parameter);
}

function exampleOf(p: Parameter): string | undefined {
  const value = p.example ?? Object.values(p.examples ?? {})[0]?.value ?? p.schema?.example ?? p.schema?.default ?? p.schema?.enum?.[0];
  return value === undefined ? undefined : String(value);
}

/** The spec's request body examples of an operation. */
export function bodyExamples(document: OpenApiDocument, op: CompiledOperation): unknown[] {
  const body = deref(document, op.definition.requestBody) as { content?: Record<string, { example?: unknown; examples?: Record<string, unknown>; schema?: { example?: unknown } }> } | undefined;
  const json = body?.content?.['application/json'];
  if (!json) return [];
  const named = Object.values(json.examples ?? {}).map((e) => (deref(document, e) as { value?: unknown }).value);
  return [json.example, ...named, json.schema?.example].filter((v) => v !== undefined);
}

const authorization = (tokens: Tokens): fc.Arbitrary<string | undefined> =>
  fc.oneof(
    { arbitrary: fc.constant(`Bearer ${tokens.own}`), weight: 12 },
    { arbitrary: fc.constant(`Bearer ${tokens.other}`), weight: 2 },
    { arbitrary: fc.constantFrom(undefined, '', 'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', `bearer ${tokens.own}`, `Bearer ${tokens.own} extra`, `Bearer  ${tokens.own}`), weight: 2 },
    { arbitrary: headerValue.map((v) => `Bearer ${v}`), weight: 1 },
  );

const extraHeaders: fc.Arbitrary<Record<string, string>> = fc.record(
  {
    prefer: fc.oneof(fc.constantFrom('code=404', 'code=400', 'code=500', 'code=999', 'code=abc', 'example=nope', 'dynamic=true', 'dynamic=maybe', 'seed=7, dynamic=true', 'code=200, example=x'), headerValue),
    'x-sandbox-scenario': fc.oneof(fc.constantFrom('delivered', 'returned', 'stuck', 'awb_failed', 'cancelled'), headerValue),
    'x-sandbox-webhook-chaos': fc.oneof(fc.constantFrom('duplicate', 'late,out_of_order', 'bad_signature', 'nope'), headerValue),
    origin: fc.constantFrom('https://tools.example.com', 'null', 'http://127.0.0.1:1'),
    'x-fuzz': headerValue,
    accept: fc.constantFrom('*/*', 'text/html', 'application/xml', 'text/event-stream'),
  },
  { requiredKeys: [] },
);

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'];

/**
 * Random requests for one operation: its path with real or hostile parameters, its
 * query with mutated values and extra keys, bodies mutated from its examples, odd
 * content types and headers, now and then another method or a body where none is taken.
 */
export function requestFor(document: OpenApiDocument, op: CompiledOperation, seeds: Seeds, tokens: Tokens): fc.Arbitrary<RawRequest> {
  const params = parametersOf(document, op);
  const pathParams = params.filter((p) => p.in === 'path');
  const queryParams = params.filter((p) => p.in === 'query');
  const seedsOf = (p: Parameter) => [...(seeds.params[p.name] ?? []), exampleOf(p) ?? 'x'];
  const path = fc.tuple(...pathParams.map((p) => pathParam(seedsOf(p)))).map((values) => {
    let i = 0;
    return op.path.replace(/\{[^}]+\}/g, () => values[i++]!);
  });
  const queryValue = (p: Parameter) =>
    fc.oneof(
      { arbitrary: fc.constantFrom(...seedsOf(p)).map((v) => [encode(v)]), weight: 4 },
      { arbitrary: nastyString.map((v) => [encode(v)]), weight: 3 },
      { arbitrary: fc.constantFrom(['1', '2'], ['%'], ['%00'], ['-1'], ['1e400'], ['']), weight: 1 },
    );
  const query = fc
    .tuple(
      fc.tuple(...queryParams.map((p) => fc.option(queryValue(p), { freq: 4 }))),
      fc.option(fc.tuple(fc.constantFrom('__code', '__example', '__dynamic', 'x', '__proto__', 'a[b]', 'limit'), nastyString.map(encode)), { freq: 3 }),
    )
    .map(([values, extra]) => {
      const pairs = queryParams.flatMap((p, i) => (values[i] ?? []).map((v) => `${encodeURIComponent(p.name)}=${v}`));
      if (extra) pairs.push(`${extra[0]}=${extra[1]}`);
      return pairs.length > 0 ? `?${pairs.join('&')}` : '';
    });
  const examples = [...(seeds.bodies[op.operationId] ?? []), ...bodyExamples(document, op)];
  const body = op.body === 'none' ? fc.option(bodyText([{ a: 1 }]), { freq: 10 }) : bodyText(examples);
  const method = fc.oneof({ arbitrary: fc.constant(op.method.toUpperCase()), weight: 19 }, { arbitrary: fc.constantFrom(...METHODS), weight: 1 });
  return fc
    .record({ method, path, query, auth: authorization(tokens), type: contentType, body, extra: extraHeaders })
    .map(({ method, path, query, auth, type, body, extra }) => {
      const headers: Record<string, string> = { ...extra };
      if (auth !== undefined) headers.authorization = auth;
      if (body !== undefined && body !== null && type !== undefined) headers['content-type'] = type;
      return { method, path: `${path}${query}`, headers, body: body === undefined || body === null ? undefined : Buffer.from(body, 'utf8') };
    });
}
