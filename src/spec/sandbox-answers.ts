import { WAITING_PER_CLIENT, domainMessages } from '../shared/index.js';
import type { OpenApiDocument } from './load.js';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The error envelope (DESIGN: every 4xx and 5xx), for a spec that has no ErrorResponse schema of its own (one given with --spec). */
const ENVELOPE = {
  type: 'object',
  required: ['success', 'message', 'errors'],
  properties: {
    success: { type: 'boolean', const: false },
    message: { type: 'string' },
    errors: { type: 'array', items: { type: 'object', required: ['field', 'message'], properties: { field: { type: 'string' }, message: { type: 'string' } } } },
  },
};

type Responses = Record<string, unknown>;
interface Operation {
  security?: unknown[];
  responses?: Responses;
}

function envelopeSchema(document: OpenApiDocument): unknown {
  const schemas = (document.components as { schemas?: Record<string, unknown> } | undefined)?.schemas;
  return schemas?.ErrorResponse ? { $ref: '#/components/schemas/ErrorResponse' } : ENVELOPE;
}

/** The limits the sandbox's own answers name: `--body-limit`, `--rate-limit` (0: none) and `--max-header-size`. */
export interface AnswerLimits {
  bodyLimit: string;
  rateLimit: number;
  maxHeaderSize: number;
  /** Set on PostgreSQL: a request that takes a token may find the database away. */
  databaseUrl?: string | undefined;
}

interface Example {
  name: string;
  value: { success: false; message: string; errors: Array<{ field: string; message: string }> };
}

/**
 * An example of each of the sandbox's own answers, by response name: the envelope the real
 * answer has under these limits, so that `Prefer: code=413` answers what a body too large
 * gets here. Without a rate limit the 429 a client can meet is that of its requests
 * waiting for their turn.
 */
function limitExamples({ bodyLimit, rateLimit, maxHeaderSize, databaseUrl }: AnswerLimits): Record<string, Example> {
  const example = (name: string, message: string, errors: Example['value']['errors'] = []): Example => ({ name, value: { success: false, message, errors } });
  return {
    TooManyRequests: example('rateLimited', rateLimit > 0 ? domainMessages.rateLimited(rateLimit, 1) : domainMessages.tooManyWaiting(WAITING_PER_CLIENT.requests, WAITING_PER_CLIENT.bytes)),
    PayloadTooLarge: example('tooLarge', domainMessages.bodyTooLarge(bodyLimit), [{ field: 'body', message: `must be at most ${bodyLimit}` }]),
    UnsupportedMediaType: example('notJson', domainMessages.unsupportedMediaType('text/plain'), [{ field: 'header.content-type', message: 'must be application/json' }]),
    HeadersTooLarge: example('headersTooLarge', domainMessages.headersTooLarge(maxHeaderSize), [{ field: 'header', message: 'too large' }]),
    // The embedded store never answers a read so: there, the 503 a request meets is the stop's.
    DatabaseUnavailable: databaseUrl !== undefined ? example('databaseUnreachable', domainMessages.storeUnreadable('ECONNREFUSED')) : example('stopping', domainMessages.stopping('requests')),
  };
}

/** The responses every operation may give, whatever it is: the sandbox answers them before it routes or validates. */
function sandboxResponses(document: OpenApiDocument, examples: Record<string, Example>): Responses {
  const schema = envelopeSchema(document);
  const answer = (name: string) => ({ 'application/json': { schema, examples: { [examples[name]!.name]: { value: examples[name]!.value } } } });
  return {
    TooManyRequests: {
      description:
        'Too Many Requests (sandbox extension: the provider documents no 429). The client sent more requests in a second than the ' +
        "sandbox's --rate-limit, or has as many requests waiting for their turn (or held by fault rules) as it may. Retry after `Retry-After` seconds.",
      headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } } },
      content: answer('TooManyRequests'),
    },
    PayloadTooLarge: {
      description: 'Payload Too Large. The body is larger than the configured limit (sandbox choice; default 1 MB); a body sent with any method is read so.',
      content: answer('PayloadTooLarge'),
    },
    UnsupportedMediaType: {
      description: 'Unsupported Media Type. A body is sent but not as `application/json` in UTF-8 (sandbox choice); a body sent with any method is read so.',
      content: answer('UnsupportedMediaType'),
    },
    HeadersTooLarge: {
      description: "Request Header Fields Too Large (sandbox extension: the provider documents no 431). The request line and headers together are larger than the sandbox's --max-header-size (16 KiB by default).",
      content: answer('HeadersTooLarge'),
    },
    DatabaseUnavailable: {
      description:
        'Service Unavailable (sandbox extension: the provider documents no 503 here). The sandbox is stopping (it takes no new requests), or, ' +
        'on PostgreSQL, cannot reach its database right now: a read says it could not read, a change that nothing was saved. Retry shortly (after `Retry-After` seconds when it is given).',
      headers: { 'Retry-After': { description: 'Seconds to wait before retrying, when given.', schema: { type: 'integer', format: 'int64', minimum: 1 } } },
      content: answer('DatabaseUnavailable'),
    },
  };
}

/** The extension listing, on an operation, the statuses `withSandboxAnswers` added to it (the sandbox's own, not the spec file's). */
export const SANDBOX_ANSWERS = 'x-sandbox-answers';

/**
 * Writes into a spec the answers the sandbox gives to any request, so the served spec
 * documents every status a client can meet: 431 (request headers too large), 413 and
 * 415 (a body too large or not JSON in UTF-8, which a GET with a body gets too) on
 * every operation, 429 (the client's rate limit or its queue of waiting requests) on
 * every operation that takes a token (a public one has no client to count), and 503 (a
 * stop under way; on PostgreSQL, the database out of reach) on those too, unless they
 * document one. An operation that documents a status of its own keeps it. Each answer's example names
 * `limits`, as the real answer does; a response of the spec file's with the same name
 * keeps its own text but for its example of that name (the bundled spec's
 * `PayloadTooLarge` and its `tooLarge`), which becomes this sandbox's answer too.
 * Changes `document` in place.
 *
 * @example withSandboxAnswers(loadSpec(PROVIDER_SPEC), { bodyLimit: '1mb', rateLimit: 0, maxHeaderSize: 16384 }).paths['/v1/order'].post.responses['431'] // { $ref: '#/components/responses/HeadersTooLarge' }
 */
export function withSandboxAnswers(document: OpenApiDocument, limits: AnswerLimits): OpenApiDocument {
  const components = ((document as { components?: Record<string, unknown> }).components ??= {}) as { responses?: Responses };
  const responses = (components.responses ??= {});
  const examples = limitExamples(limits);
  for (const [name, response] of Object.entries(sandboxResponses(document, examples))) {
    const own = (responses[name] ??= response) as { content?: Record<string, { examples?: Record<string, { value?: unknown }> }> };
    const example = own.content?.['application/json']?.examples?.[examples[name]!.name];
    if (example) example.value = examples[name]!.value;
  }
  const global = (document as { security?: unknown[] }).security;
  for (const item of Object.values(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method] as Operation | undefined;
      if (!operation?.responses) continue;
      const security = operation.security ?? global ?? [];
      const added: string[] = [];
      const add = (status: string, name: string): void => {
        if (operation.responses![status] !== undefined) return;
        operation.responses![status] = { $ref: `#/components/responses/${name}` };
        added.push(status);
      };
      if (security.length > 0) add('429', 'TooManyRequests');
      // An operation that takes a token reads or writes the client's data: on PostgreSQL it may find the database away.
      if (security.length > 0) add('503', 'DatabaseUnavailable');
      add('413', 'PayloadTooLarge');
      add('415', 'UnsupportedMediaType');
      add('431', 'HeadersTooLarge');
      if (added.length > 0) (operation as Record<string, unknown>)[SANDBOX_ANSWERS] = added;
    }
  }
  return document;
}
