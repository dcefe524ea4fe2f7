import { Conflict, DomainError, domainMessages, Forbidden, LimitReached, NotFound, RuleViolation, TooManyRequests, Unavailable, type FieldError } from '../shared/index.js';

export type { FieldError } from '../shared/index.js';

/** The body of every 4xx/5xx answer of the sandbox. */
export interface ErrorEnvelope {
  success: false;
  message: string;
  errors: FieldError[];
}

/**
 * The error type of the HTTP edge (401, 405, 413, 415, ...). Domain code throws the
 * errors of `shared/errors.ts` instead; `toApiError` maps those here, in one place.
 *
 * @example throw new ApiError(404, messages.notFound)
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors: FieldError[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toEnvelope(): ErrorEnvelope {
    return { success: false, message: this.message, errors: this.errors };
  }
}

const EXACT_PATHS = 'Paths match exactly as the provider documents them (letter case, no trailing slash).';

/** Every message the sandbox answers with, in one place. */
export const messages = {
  notFound: domainMessages.notFound,
  isRequired: domainMessages.isRequired,
  undecodableBody: (encoding: string) => `The request body could not be decompressed as its Content-Encoding (${encoding}) says; send it compressed so, or without Content-Encoding.`,
  stopping: domainMessages.stopping,
  unwantedUpgrade: (protocol: string) => `This request asks to upgrade its connection to ${protocol}, which this sandbox does not speak here: send it without the Upgrade header.`,
  unknownPath: (method: string, path: string) =>
    /^\/__sandbox(\/|$)/i.test(path)
      ? `No operation ${method} ${path}.${path.startsWith('/__sandbox') ? '' : ' Control paths begin with /__sandbox in lower case (the rest of the path may be in any case).'} See GET /__sandbox/control.openapi.json for the paths of the control API.`
      : `No operation ${method} ${path}. See GET /__sandbox/openapi.json for the paths this sandbox serves${path === '/' ? ', /docs for its manual and /dashboard for its dashboard' : ''}.`,
  missingParameter: (method: string, path: string, template: string, name: string) => {
    // A path in another case (`/V1/Order/Tracking`) is told that too, as a near miss without a missing value is.
    const stem = template.slice(0, template.lastIndexOf('/{'));
    const exact = path === stem || path.startsWith(`${stem}/`);
    return `No operation ${method} ${path}: the provider's path is ${template}, and its ${name} is missing.${exact ? '' : ` ${EXACT_PATHS}`}`;
  },
  inexactPath: (method: string, path: string, documented: string) => `No operation ${method} ${path}: the provider's path is ${documented}. ${EXACT_PATHS}`,
  methodNotAllowed: (method: string, allowed: string[]) =>
    `Method ${method} is not allowed here; use ${allowed.join(', ')}.`,
  invalidRequest: domainMessages.invalidRequest,
  malformedJson: 'The body is not valid JSON; check quotes, commas and brackets.',
  notAnObject: 'The body is valid JSON but not an object: send the fields in {...}.',
  notWellFormed: 'The body holds text that is not valid Unicode: half of a surrogate pair escaped alone (such as \\ud800), which a strict receiver cannot decode. Send whole characters (the character itself, or both halves of its pair).',
  notFinite: 'The body holds a number too large for JSON to carry faithfully (it would read as infinity): send a smaller one.',
  twoAuthorizations: 'The request has two Authorization headers; send one, with the token of the client it is for.',
  headerTwice: (name: string) => `The request has two ${name} headers; send one: of two, the sandbox cannot tell which one you meant.`,
  notUtf8: 'The body is not valid UTF-8: JSON is sent in UTF-8 (RFC 8259), and text in another encoding would be stored changed.',
  unsupportedEncoding: (encoding: string) => `The body's Content-Encoding "${encoding}" is not supported; send it as it is, or compressed once with gzip, deflate or br.`,
  unsupportedCharset: (charset: string) => `The body must be JSON in UTF-8 (got charset "${charset}"); send UTF-8 with "Content-Type: application/json".`,
  unsupportedMediaType: domainMessages.unsupportedMediaType,
  bodyTooLarge: domainMessages.bodyTooLarge,
  bodyRequired: 'A JSON body is required.',
  missingToken: 'Missing bearer token: send the header "Authorization: Bearer <token>".',
  malformedAuth: 'The Authorization header must be "Bearer <token>".',
  unknownToken: 'Unknown token: use one of the tokens the sandbox printed at start or was configured with.',
  readOnly: domainMessages.readOnly,
  adminOnly: 'This operation acts on the whole sandbox: only an admin token (--admin-token) may do it here, or the only client of a sandbox without one.',
  actForWhom: (ids: string[]) => `An admin token acts for a client: name it with the header "X-Sandbox-Client: <client id>" (one of ${ids.join(', ')}).`,
  unknownClient: (id: string, ids: string[]) => `No client "${id}" in this sandbox; X-Sandbox-Client must be one of ${ids.join(', ')}.`,
  notYourClient: 'Only an admin token may act for another client; drop the X-Sandbox-Client header or name your own client.',
  internal: 'The sandbox failed to answer this request; it has been logged. Please report it.',
} as const;

export const notFound = (): ApiError => new ApiError(404, messages.notFound);

export const invalid = (errors: FieldError[], message: string = messages.invalidRequest): ApiError =>
  new ApiError(400, message, errors);

/** The status of each kind of domain error: the one place the domain meets HTTP. */
const STATUS_OF = new Map<Function, number>([
  [NotFound, 404],
  [Forbidden, 403],
  [RuleViolation, 400],
  [Conflict, 409],
  [LimitReached, 400],
  [Unavailable, 503],
  [TooManyRequests, 429],
]);

/** A domain error's status: its class's, or the nearest ancestor's (a feature's `OrderNotFound extends NotFound` is a 404). */
function statusOf(error: DomainError): number {
  for (let proto = Object.getPrototypeOf(error) as object | null; proto && proto !== DomainError.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
    const status = STATUS_OF.get(proto.constructor);
    if (status !== undefined) return status;
  }
  return 500;
}

/** Methods of requests that only read: a store they cannot reach is said as "cannot read" (see Unavailable.readMessage). */
const READS = new Set(['GET', 'HEAD']);

/**
 * The HTTP error of anything thrown while answering; a 500 for what is neither an ApiError
 * nor a domain error. `method`: the request's, which picks what an Unavailable says.
 */
export function toApiError(error: unknown, method?: string): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof DomainError) {
    const headers: Record<string, string> = error instanceof Unavailable || error instanceof TooManyRequests ? { 'Retry-After': String(error.retryAfterSeconds) } : {};
    const message = error instanceof Unavailable && error.readMessage !== undefined && READS.has(method ?? '') ? error.readMessage : error.message;
    return new ApiError(statusOf(error), message, error.errors, headers);
  }
  return new ApiError(500, messages.internal);
}
