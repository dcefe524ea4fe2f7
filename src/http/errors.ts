/** One problem with one part of a request, e.g. `{ field: 'items[1].item_weight', message: '...' }`. */
export interface FieldError {
  field: string;
  message: string;
}

/** The body of every 4xx/5xx answer of the sandbox. */
export interface ErrorEnvelope {
  success: false;
  message: string;
  errors: FieldError[];
}

/**
 * The one error type of the sandbox. Domain code throws it; the HTTP edge turns it
 * into the error envelope with its status.
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

/** Every message the sandbox answers with, in one place. */
export const messages = {
  notFound: 'Record Not Found',
  unknownPath: (method: string, path: string) =>
    `No operation ${method} ${path}. See GET /__sandbox/openapi.json for the paths this sandbox serves.`,
  methodNotAllowed: (method: string, allowed: string[]) =>
    `Method ${method} is not allowed here; use ${allowed.join(', ')}.`,
  invalidRequest: 'The request is not valid; see errors.',
  malformedJson: 'The body is not valid JSON; check quotes, commas and brackets.',
  unsupportedMediaType: (got: string) =>
    `The body must be sent as application/json (got "${got}"); set the header "Content-Type: application/json".`,
  bodyTooLarge: (limit: string) => `The body is larger than the limit of ${limit}; send fewer items per request.`,
  bodyRequired: 'A JSON body is required.',
  missingToken: 'Missing bearer token: send the header "Authorization: Bearer <token>".',
  malformedAuth: 'The Authorization header must be "Bearer <token>".',
  unknownToken: 'Unknown token: use one of the tokens the sandbox printed at start or was configured with.',
  readOnly: 'This token is read-only: it may not create or change orders.',
  courierNotEnabled: (code: string) => `This client is not enabled for courier "${code}".`,
  internal: 'The sandbox failed to answer this request; it has been logged. Please report it.',
} as const;

export const notFound = (): ApiError => new ApiError(404, messages.notFound);

export const invalid = (errors: FieldError[], message: string = messages.invalidRequest): ApiError =>
  new ApiError(400, message, errors);
