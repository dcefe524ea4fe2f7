import { randomUUID } from 'node:crypto';
import type { BodyReply, Handler, OperationInput } from './handler.js';
import type { CompiledOperation, OpenApiDocument } from '../spec/index.js';
import { exampleAnswer, plausibleAnswer } from './plausible-answers.js';
/** A reply with a status (not a stream). */
export type StatusReply = BodyReply;

/** How to answer with a documented response; Prism's mock config, per request. */
export interface AnswerChoice {
  /** A documented status; the lowest 2xx (Prism's default) when absent. */
  status?: number;
  /** Name of one of the response's `examples`. */
  example?: string;
  /** Generated from the schema even when the spec has an example. */
  dynamic?: boolean;
  /** Makes generated data reproducible; random when absent. */
  seed?: string;
}

type PrismHttp = typeof import('@stoplight/prism-http');
type Prism = ReturnType<PrismHttp['createInstance']>;
type PrismConfig = Parameters<PrismHttp['createInstance']>[0];
type PrismRequest = Parameters<Prism['request']>[0];
/** Prism's model of an operation (@stoplight/types' IHttpOperation). */
export type PrismOperation = Parameters<Prism['request']>[1][number];

interface Engine {
  prism: Prism;
  operations: (document: OpenApiDocument) => Promise<PrismOperation[]>;
}

let engine: Promise<Engine> | undefined;

/** Prism's logger wants pino with a `success` level; the sandbox logs requests itself. */
async function silentLogger() {
  const { pino } = await import('pino');
  return pino({ level: 'silent', customLevels: { success: 31 } });
}

/**
 * Loads @stoplight/prism-http on first need only: it is slow to load and large in memory,
 * so start-up, and a sandbox that never mocks, do not pay for it.
 */
function loadEngine(): Promise<Engine> {
  engine ??= (async () => {
    // A CommonJS package: its exports are `default` under Node's loader, the namespace itself under some loaders.
    const loaded = (await import('@stoplight/prism-http')) as PrismHttp & { default?: PrismHttp };
    const http = loaded.default ?? loaded;
    const logger = await silentLogger();
    const prism = http.createInstance(baseConfig({ dynamic: false }), { logger: logger as unknown as Parameters<PrismHttp['createInstance']>[1]['logger'] });
    const byDocument = new WeakMap<OpenApiDocument, Promise<PrismOperation[]>>();
    const operations = (document: OpenApiDocument) => {
      let ops = byDocument.get(document);
      // Prism dereferences in place: it gets a copy, the served document stays as it is.
      if (!ops) byDocument.set(document, (ops = http.getHttpOperationsFromSpec(structuredClone(document))));
      return ops;
    };
    return { prism, operations };
  })();
  return engine;
}

/**
 * Our validation runs in front (security, content type, schemas, with our error
 * envelope), so Prism only routes to the operation and mocks its answer.
 */
function baseConfig(mock: PrismConfig['mock']): PrismConfig {
  return { mock, checkSecurity: false, validateRequest: false, validateResponse: false, errors: false, upstreamProxy: undefined, isProxy: false };
}

/** Prism's model of an operation of a document (responses, examples, callbacks). */
export async function prismOperation(document: OpenApiDocument, operation: CompiledOperation): Promise<PrismOperation> {
  const ops = await (await loadEngine()).operations(document);
  const found = ops.find((o) => o.method === operation.method && o.path === operation.path);
  if (!found) throw new Error(`Prism found no ${operation.method.toUpperCase()} ${operation.path} in the spec`);
  return found;
}

/** The request path of an input, rebuilt from its operation's template (so Prism routes it to that operation). */
export const requestPath = (input: OperationInput): string =>
  input.operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(input.params[name] ?? ''));

/** A key naming a request for seeded generation: the same request gives the same key. */
export const requestKey = (input: OperationInput): string => `${input.operation.method.toUpperCase()} ${requestPath(input)}`;

const isJson = (type: string): boolean => /^application\/([\w.+-]*\+)?json\b/i.test(type);

function headersOf(output: Record<string, unknown> | undefined): { type: string | undefined; headers: Record<string, string> } {
  let type: string | undefined;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(output ?? {})) {
    if (name.toLowerCase() === 'content-type') type = String(value);
    else if (value !== undefined && value !== null) headers[name] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return { type, headers };
}

/**
 * Prism's answer to a request, as a reply. An `Accept` the operation cannot meet
 * gets its default media type, as a handler's answer would.
 */
async function prismAnswer(document: OpenApiDocument, input: OperationInput, choice: AnswerChoice): Promise<StatusReply> {
  const { prism } = await loadEngine();
  const resource = await prismOperation(document, input.operation);
  const mock = { code: choice.status, exampleKey: choice.example, dynamic: choice.dynamic ?? false, seed: choice.seed ?? randomUUID() };
  const accept = input.headers.accept;
  const ask = async (withAccept: boolean) => {
    const headers: Record<string, string> = withAccept && accept ? { accept } : {};
    const request: PrismRequest = { method: resource.method as PrismRequest['method'], url: { path: requestPath(input) }, headers, body: input.body };
    return prism.request(request, [resource], baseConfig({ ...mock, mediaTypes: undefined }))();
  };
  let result = await ask(true);
  // Prism answers 406 (or an error wrapping it) when no documented media type meets Accept.
  if (result._tag === 'Left' && accept) result = await ask(false);
  if (result._tag === 'Left') {
    // Routing, security, validation and the Prefer checks ran before: what Prism still
    // refuses is a spec it cannot answer from, a defect of the sandbox's spec (a 500, logged).
    const problem = result.left as Error & { status?: number; detail?: string };
    throw new Error(`The spec gives no answer for ${input.operation.operationId}: ${problem.detail ?? problem.message}`);
  }
  const { statusCode, body, headers: outputHeaders } = result.right.output;
  const { type, headers } = headersOf(outputHeaders);
  if (body === undefined || (body === null && !type)) return { status: statusCode, headers };
  if (type && !isJson(type)) return { status: statusCode, headers, serialized: typeof body === 'string' ? body : JSON.stringify(body), type };
  return { status: statusCode, headers, body };
}

/**
 * The answer the spec documents for a request, from Prism's mocker: the status,
 * example or generated data the choice asks for, negotiated with the request's
 * `Accept`. Generation is seeded per request: with `choice.seed` the same data every
 * time, without it a fresh random seed, so no seed outlives its request.
 *
 * Where no example was asked for and Prism's static sampler (which ignores patterns
 * and formats) made an answer that does not match the spec, the answer is generated
 * from the schema instead, with the same seed. A generated answer then gets the
 * invariants of its operation the schema cannot state (see plausible-answers.ts).
 *
 * @example await documentedAnswer(document, input, { status: 404 })
 */
export async function documentedAnswer(document: OpenApiDocument, input: OperationInput, choice: AnswerChoice): Promise<StatusReply> {
  const reply = await prismAnswer(document, input, choice);
  // A generated answer that is not JSON (an event stream, a string schema) is lorem text, which the provider never sends: its example instead.
  if (choice.dynamic && reply.type !== undefined && !isJson(reply.type)) return prismAnswer(document, input, { ...choice, dynamic: false });
  if (choice.dynamic) return plausibleAnswer(input, reply);
  if (reply.body === undefined) return reply;
  if (choice.example !== undefined || input.operation.validateResponse(reply.status, reply.body).length === 0) return exampleAnswer(input, reply);
  return plausibleAnswer(input, await prismAnswer(document, input, { ...choice, status: reply.status, dynamic: true }));
}

/**
 * Answers an operation that has no handler (say, one a fuller provider spec brings
 * with `--spec`) with Prism's mocker: its lowest 2xx status with its first example,
 * else data generated from its schema, seeded by the request (and `--seed`): the
 * same request, the same data. `Prefer` may ask for another status, example or
 * generated data (see prefer.ts).
 */
export function specAnswer(document: OpenApiDocument, seed = ''): Handler {
  return (input) => documentedAnswer(document, input, { seed: `${seed}|${requestKey(input)}` });
}
