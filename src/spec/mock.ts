import { randomInt } from 'node:crypto';
import type { BodyReply, Handler, OperationInput } from '../http/handler.js';
import { hash32 } from '../ids/random.js';
import type { CompiledOperation } from './compile.js';
import { deref, type OpenApiDocument } from './load.js';

interface MediaType {
  schema?: unknown;
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
}

interface ResponseObject {
  content?: Record<string, MediaType>;
  headers?: Record<string, { schema?: { example?: unknown }; example?: unknown }>;
}

/** A reply with a status (not a stream). */
export type StatusReply = BodyReply;

/** How to answer with a documented response: which status, which example, or generated data. */
export interface AnswerChoice {
  status: number;
  /** Name of one of the response's `examples`; the first example when absent. */
  example?: string;
  /** Generated from the schema even when the spec has an example. */
  dynamic?: boolean;
  /** Makes generated data reproducible; random when absent. */
  seed?: string;
}

type Faker = typeof import('json-schema-faker');
let faker: Promise<Faker> | undefined;
/** json-schema-faker is loaded on first need only, so start-up stays fast and small. */
const loadFaker = (): Promise<Faker> => (faker ??= import('json-schema-faker'));

function responseOf(document: OpenApiDocument, definition: Record<string, unknown>, status: number): ResponseObject | undefined {
  return deref(document, (definition.responses as Record<string, unknown> | undefined)?.[String(status)]) as ResponseObject | undefined;
}

const jsonMedia = (response: ResponseObject | undefined): MediaType | undefined =>
  response?.content?.['application/json'] ?? Object.entries(response?.content ?? {}).find(([type]) => /json/i.test(type))?.[1];

/** The documented example of an operation's answer with this status, if the spec has one. */
export function exampleOf(document: OpenApiDocument, definition: Record<string, unknown>, status: number, name?: string): unknown {
  const media = jsonMedia(responseOf(document, definition, status));
  if (!media) return undefined;
  if (name !== undefined) return media.examples?.[name]?.value;
  if (media.example !== undefined) return media.example;
  return Object.values(media.examples ?? {})[0]?.value;
}

/** A documented example that is not JSON (say, a `text/event-stream`), with its media type. */
export function textExampleOf(document: OpenApiDocument, operation: CompiledOperation, status: number): { type: string; text: string } | undefined {
  for (const [type, media] of Object.entries(responseOf(document, operation.definition, status)?.content ?? {})) {
    const example = media.example ?? Object.values(media.examples ?? {})[0]?.value;
    if (!/json/i.test(type) && typeof example === 'string') return { type, text: example };
  }
  return undefined;
}

/** The names of the examples documented for an operation, by status. */
export function exampleNames(document: OpenApiDocument, operation: CompiledOperation): Map<number, string[]> {
  return new Map(operation.statuses.map((status) => [status, Object.keys(jsonMedia(responseOf(document, operation.definition, status))?.examples ?? {})]));
}

/** A copy of a schema with every local `$ref` inlined, so the generator needs no resolver. */
export function inlineRefs(document: OpenApiDocument, schema: unknown, depth = 0): unknown {
  if (depth > 32 || typeof schema !== 'object' || schema === null) return schema;
  if (Array.isArray(schema)) return schema.map((s) => inlineRefs(document, s, depth + 1));
  const { $ref, ...rest } = schema as Record<string, unknown>;
  const target = typeof $ref === 'string' ? (inlineRefs(document, deref(document, { $ref }), depth + 1) as Record<string, unknown>) : {};
  const own = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, inlineRefs(document, v, depth + 1)]));
  return { ...target, ...own };
}

/**
 * Data generated from a JSON schema by json-schema-faker: the same seed gives the
 * same data; without a seed it is random. The seed is passed per call, so no seed
 * outlives the request that gave it.
 *
 * @example await generateData({ type: 'object', properties: { id: { type: 'string' } } }, 'seed-1')
 */
export async function generateData(schema: unknown, seed?: string): Promise<unknown> {
  const { generateSync } = await loadFaker();
  return generateSync(schema as Parameters<Faker['generateSync']>[0], {
    alwaysFakeOptionals: true,
    // json-schema-faker falls back to a fixed seed of its own: random data needs a random seed.
    seed: seed === undefined ? randomInt(2 ** 31) : hash32(seed),
  });
}

function documentedHeaders(response: ResponseObject | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, header] of Object.entries(response?.headers ?? {})) {
    const value = header.example ?? header.schema?.example;
    if (value !== undefined) headers[name] = String(value);
  }
  return headers;
}

/**
 * The answer the spec documents for an operation and status: the named (or first)
 * example, or data generated from the response schema when `dynamic` is set or the
 * spec has no example. A response without JSON content answers with no body.
 */
export async function documentedAnswer(document: OpenApiDocument, operation: CompiledOperation, choice: AnswerChoice): Promise<StatusReply> {
  const response = responseOf(document, operation.definition, choice.status);
  const headers = documentedHeaders(response);
  const media = jsonMedia(response);
  if (!media) return { status: choice.status, headers };
  const example = choice.dynamic ? undefined : exampleOf(document, operation.definition, choice.status, choice.example);
  const body = example !== undefined ? example : await generateData(inlineRefs(document, media.schema ?? {}), choice.seed);
  return { status: choice.status, body, headers };
}

/** The lowest documented 2xx status of an operation (200 when it documents none). */
export const successStatus = (operation: CompiledOperation): number =>
  operation.statuses.filter((s) => s >= 200 && s < 300).sort((a, b) => a - b)[0] ?? 200;

/** A key naming a request for seeded generation: the same request gives the same key. */
export const requestKey = (input: OperationInput): string => `${input.operation.method} ${input.path}`;

/**
 * Answers an operation that has no handler from its spec: the lowest documented 2xx
 * status with its example, else data generated from its schema. Generated answers are
 * a function of the request (and `seed`): the same request gets the same data.
 */
export function specAnswer(document: OpenApiDocument, seed = ''): Handler {
  return (input) => {
    const status = successStatus(input.operation);
    return documentedAnswer(document, input.operation, { status, seed: `${seed}|${requestKey(input)}|${status}` });
  };
}
