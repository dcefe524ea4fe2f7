/** Every message of the fault rules, in one place. */
export const faultMessages = {
  injected: (status: number, id: string) => `Fault injected by the sandbox (rule ${id}): status ${status}.`,
  ruleNotFound: (id: string) => `No fault rule ${id} for this client; GET /__sandbox/faults lists them.`,
  invalidRule: 'The fault rule is not valid; see errors.',
  ruleTooLarge: (max: number) => `must be at most ${max} bytes of JSON (match and action together)`,
  rulesTooLarge: (max: number) =>
    `This client's fault rules would hold more than ${max} bytes of JSON together, the most they may; delete some (DELETE /__sandbox/faults/{id}) or make them smaller first.`,
  tooManyRules: (max: number) => `This client has ${max} fault rules, the most it may have; delete some (DELETE /__sandbox/faults/{id}, or DELETE /__sandbox/faults for all) first.`,
  unusedField: (type: string) => `is not used by a ${type} action`,
  maxBelowMin: 'must be at least ms',
  tooManyHeld: (max: number) =>
    `This client already has ${max} requests held open by fault rules (hang, latency, dribble, or reset after a delay), the most it may at once; close some of those connections (or delete the rule) and retry.`,
  badHeader: 'must be a valid HTTP header name with a value of visible characters',
  browserHeader: (name: string) => `cannot be set by a fault rule: ${name} acts on the browser that reads the answer (a redirect, cookies, site data or its policies), the operator's dashboard too`,
  framingHeader: (name: string) => `cannot be set by a fault rule: ${name} frames the answer or the connection, which the sandbox sets itself`,
  badContentType: 'must be a media type such as application/json or text/plain; charset=utf-8',
  noBody: (operations: readonly string[]): string => `no request of ${operations.join(', ')} has a body to match: leave body out, or name an operation that takes one`,
  refusedContentType: (operations: readonly string[]): string =>
    `a request of ${operations.join(', ')} with this Content-Type is answered 415 (the API takes application/json in UTF-8) or 400 (no body) before any fault rule applies: match a JSON Content-Type, or leave it out`,
  refusedEncoding: (operations: readonly string[]): string =>
    `a request of ${operations.join(', ')} with this Content-Encoding is answered 415 (the sandbox takes gzip, deflate, br or identity) or 400 (no body) before any fault rule applies: match one of those, or leave it out`,
  refusedNoBody: (operations: readonly string[]): string => `a request of ${operations.join(', ')} without a body is answered 400 before any fault rule applies: leave Content-Length out`,
  refusedTooLarge: (operations: readonly string[], limit: string): string =>
    `a request of ${operations.join(', ')} with a body over this sandbox's limit of ${limit} (--body-limit) is answered 413 before any fault rule applies: use a Content-Length within it`,
  badMatchHeader: 'is no HTTP header name, so no request would meet it',
  paddedHeader: 'must not begin or end with spaces: a request\'s header value arrives without them, so no request would meet it',
  refusedExpect: 'a request with an Expect that does not ask for 100-continue is answered 417 before any fault rule applies (on every path, in HTTP/1.1): leave Expect out',
  refusedLength: 'is not a length: such a request is refused before any fault rule applies (node answers 400): leave Content-Length out',
  badRetryAfter: 'must be a whole number of seconds (e.g. "2") or an HTTP date (e.g. "Wed, 21 Oct 2026 07:28:00 GMT"): a client reads nothing else in Retry-After',
  foreignCredential:
    'must be "Bearer <token>" with one of this client\'s tokens (or an admin token acting for it): a request with any other is not this client\'s, so no request would meet it',
  adminTokenShown: 'holds an admin token, which this client\'s tokens would read in the rule: fault an admin\'s requests by "Authorization: Bearer <admin token>", which the rule shows as [an admin token]',
  badBodyPath: 'each key must be a field path such as items[0].cod',
  refusedBodyValue: (operations: readonly string[], problem: string): string =>
    `a request of ${operations.join(', ')} with this value is answered 400 (${problem}) before any fault rule applies: match a value the API takes`,
} as const;
