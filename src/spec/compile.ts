import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FieldError } from '../shared/index.js';
import { GIVEN_ONCE, toFieldErrors } from './diagnostics.js';
import { deref, pointer, type OpenApiDocument } from './load.js';
import { paramsSchema, pathPatternsOf, type ParameterObject } from './parameters.js';
import { SANDBOX_ANSWERS } from './sandbox-answers.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'] as const;

/** The parts of a request an operation validates. Header names are lower-case. */
export interface RequestParts {
  path: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  body: unknown;
}

/** One operation of a spec, with its request validators compiled at start-up or at first use (its response validators at first use). */
export interface CompiledOperation {
  operationId: string;
  method: string;
  /** The OpenAPI path, e.g. `/v1/order/tracking/{order_no}`. */
  path: string;
  /** Whether a bearer token is required. */
  secured: boolean;
  /** Whether the operation takes a JSON body, and must have one. */
  body: 'none' | 'optional' | 'required';
  /** The names of its query parameters, every style. */
  queryNames: ReadonlySet<string>;
  /** The `pattern` of each path parameter whose schema has one, by name: what a request's segment must match to reach it. */
  pathPatterns: Readonly<Record<string, string>>;
  /** Status codes the spec documents for it. */
  statuses: number[];
  /** Those of them the spec's own file documents: without the sandbox's protective answers (429, 413, 415, 431) that `withSandboxAnswers` adds. */
  ownStatuses: number[];
  definition: Record<string, unknown>;
  /** Validates (and coerces query/path values in place); returns the problems found. */
  validateRequest(parts: RequestParts): FieldError[];
  /** Validates a parsed JSON body alone: the body's part of `validateRequest`'s problems. */
  validateBody(body: unknown): FieldError[];
  /** Validates a JSON answer against the documented response; returns the problems found. */
  validateResponse(status: number, body: unknown): FieldError[];
}

export interface CompiledSpec {
  document: OpenApiDocument;
  operations: CompiledOperation[];
  byId: Map<string, CompiledOperation>;
  /** For a spec compiled lazily: references that do not resolve, found at start (Ajv may never need them; one it needs fails that operation's requests). */
  unresolved: string[];
}

/**
 * Compiles every operation of an OpenAPI 3.1 document once: routes, security and
 * Ajv validators for parameters, bodies and responses. Nothing reads the spec per request.
 * Request validators are compiled here, or with `lazy` at an operation's first request
 * (the bundled specs, which the tests compile whole: a third of a second off every
 * start, and 2-30 ms once at each operation's first request); response validators at
 * their first use.
 *
 * @example const spec = compileSpec(loadSpec(PROVIDER_SPEC)); spec.byId.get('createOrder')
 */
export function compileSpec(document: OpenApiDocument, id = 'spec', options: { lazy?: boolean } = {}): CompiledSpec {
  // Compiled at first use, a reference that does not resolve would only show then: it is named now (a warning, as Ajv may never need it).
  const unresolved = options.lazy ? unresolvedRefs(document) : [];
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateSchema: false });
  const coercing = new Ajv2020({ allErrors: true, strict: false, validateSchema: false, coerceTypes: true });
  const firstError = new Ajv2020({ allErrors: false, strict: false, validateSchema: false });
  for (const instance of [ajv, coercing, firstError]) {
    addFormats(instance);
    instance.addSchema(document, id);
  }
  const base = `${id}#`;
  const globalSecurity = document.security as unknown[] | undefined;
  const operations: CompiledOperation[] = [];

  for (const [path, item] of Object.entries(document.paths ?? {})) {
    const itemRef = `/paths/${pointer(path)}`;
    for (const method of METHODS) {
      const op = item[method] as Record<string, unknown> | undefined;
      if (!op) continue;
      const opRef = `${itemRef}/${method}`;
      const params = [
        ...((item.parameters as unknown[]) ?? []).map((p, i) => ({ raw: p, ref: `${itemRef}/parameters/${i}` })),
        ...((op.parameters as unknown[]) ?? []).map((p, i) => ({ raw: p, ref: `${opRef}/parameters/${i}` })),
      ].map(({ raw, ref }) => {
        const target = (raw as { $ref?: string }).$ref;
        return { p: deref(document, raw) as ParameterObject, ref: target ? target.slice(1) : ref };
      });
      // A deepObject parameter is sent bracketed (`?filter[status]=x`), and an array one repeated, by design: not ones to refuse so.
      const queryNames = new Set(params.filter(({ p }) => p.in === 'query' && p.style !== 'deepObject' && (p as { schema?: { type?: unknown } }).schema?.type !== 'array').map(({ p }) => p.name));
      const requestBody = deref(document, op.requestBody) as { required?: boolean; content?: Record<string, unknown> } | undefined;
      const bodyRef = (op.requestBody as { $ref?: string } | undefined)?.$ref?.slice(1) ?? `${opRef}/requestBody`;
      const compileRequest = () => {
        const validators: Array<{ part: keyof RequestParts; validate: ValidateFunction }> = [];
        for (const where of ['path', 'query', 'header'] as const) {
          const schema = paramsSchema(base, params, where);
          if (schema) validators.push({ part: where === 'header' ? 'headers' : where, validate: coercing.compile(schema) });
        }
        const bodySchema = { $ref: `${base}${bodyRef}/content/application~1json/schema` };
        const body = requestBody?.content?.['application/json'] ? { all: ajv.compile(bodySchema), first: firstError.compile(bodySchema) } : undefined;
        return { validators, body };
      };
      // Compiled once: a failure too is kept, so no request makes the work again.
      let request: ReturnType<typeof compileRequest> | Error | undefined = options.lazy ? undefined : compileRequest();
      const requestValidators = (): ReturnType<typeof compileRequest> => {
        if (request === undefined) {
          try {
            request = compileRequest();
          } catch (error) {
            request = error as Error;
          }
        }
        if (request instanceof Error) throw request;
        return request;
      };

      const responses = (op.responses ?? {}) as Record<string, unknown>;
      // Response validators are compiled when first used (answers from the spec, --strict
      // checks): they were about half of the compiling at every start, and most are never used.
      const responseValidators = new Map<string, () => ValidateFunction>();
      for (const [code, raw] of Object.entries(responses)) {
        const response = deref(document, raw) as { content?: Record<string, { schema?: unknown }> };
        if (!response.content?.['application/json']?.schema) continue;
        const ref = (raw as { $ref?: string }).$ref?.slice(1) ?? `${opRef}/responses/${code}`;
        let compiled: ValidateFunction | undefined;
        responseValidators.set(code, () => (compiled ??= ajv.compile({ $ref: `${base}${ref}/content/application~1json/schema` })));
      }
      const security = (op.security as unknown[] | undefined) ?? globalSecurity ?? [];

      operations.push({
        operationId: String(op.operationId ?? `${method} ${path}`),
        method,
        path,
        secured: security.length > 0 && !security.some((s) => Object.keys(s as object).length === 0),
        body: !requestBody ? 'none' : requestBody.required ? 'required' : 'optional',
        queryNames: new Set(params.filter(({ p }) => p.in === 'query').map(({ p }) => p.name)),
        pathPatterns: pathPatternsOf(document, params),
        statuses: Object.keys(responses).filter((c) => /^\d{3}$/.test(c)).map(Number),
        ownStatuses: Object.keys(responses)
          .filter((c) => /^\d{3}$/.test(c) && !((op[SANDBOX_ANSWERS] as string[] | undefined) ?? []).includes(c))
          .map(Number),
        definition: op,
        validateRequest(parts) {
          const { validators, body } = requestValidators();
          const problems: FieldError[] = [];
          for (const { part, validate } of validators) {
            if (!validate(parts[part])) problems.push(...toFieldErrors(validate.errors, part === 'headers' ? 'header' : '', true));
          }
          if (queryNames.size > 0) addNotGivenOnce(problems, parts.query, queryNames);
          if (body && parts.body !== undefined) problems.push(...bodyProblems(body, parts.body));
          return problems;
        },
        validateBody(value) {
          const { body } = requestValidators();
          return body ? bodyProblems(body, value) : [];
        },
        validateResponse(status, body) {
          const validator = responseValidators.get(String(status)) ?? responseValidators.get(`${String(status)[0]}XX`) ?? responseValidators.get('default');
          if (!validator) {
            return responses[String(status)] ? [] : [{ field: 'status', message: `${status} is not documented for ${String(op.operationId)}` }];
          }
          const validate = validator();
          return validate(body) ? [] : toFieldErrors(validate.errors);
        },
      });
    }
  }
  return { document, operations, byId: new Map(operations.map((o) => [o.operationId, o])), unresolved };
}

/**
 * A known query parameter given twice (`?limit=1&limit=2`, a list) or sent in a bracketed
 * form (`?endpoint_id[]=x`, `?limit[a]=1`: the query parser keeps such a key as it is, so
 * the operation would read the parameter as absent and answer for its default, whereas
 * the client meant a value): told it must be given once (GIVEN_ONCE), in place of what
 * its form made of it (an "is required", or a list that is not a whole number).
 * Unknown keys stay ignored, as the provider ignores them.
 */
function addNotGivenOnce(problems: FieldError[], query: unknown, names: ReadonlySet<string>): void {
  if (typeof query !== 'object' || query === null) return;
  for (const [key, value] of Object.entries(query)) {
    const open = key.indexOf('[');
    const name = open > 0 ? key.slice(0, open) : Array.isArray(value) ? key : '';
    if (!names.has(name)) continue;
    for (let i = problems.length - 1; i >= 0; i -= 1) if (problems[i]!.field === name) problems.splice(i, 1);
    problems.push({ field: name, message: GIVEN_ONCE });
  }
}

/** An invalid body's arrays are cut to this many items before its problems are listed (see bodyProblems). */
export const LISTED_ARRAY_ITEMS = 128;

/** What a cut array may still be told of: its true length is past any `maxItems` the cut one is, and a duplicate among its first items is one among all. */
const TRUE_OF_A_CUT_ARRAY = new Set(['maxItems', 'uniqueItems']);

/**
 * The problems of a JSON body. Ajv listing every error takes time that grows with the
 * square of the errors when an array's items each have some (it copies the list so far
 * at each item): a body of a few thousand empty items would hold the process for
 * seconds. So a body is checked up to its first problem first (linear, and all a valid
 * body needs); an invalid one has its problems listed with its arrays cut to their first
 * LISTED_ARRAY_ITEMS items, its first problem always among them (an array past its
 * `maxItems`, say, when the cut hides it). A cut array's own problems that the cut may
 * have made (too few items, no item that `contains` asks for) are not listed.
 */
function bodyProblems(body: { all: ValidateFunction; first: ValidateFunction }, value: unknown): FieldError[] {
  if (body.first(value)) return [];
  const first = toFieldErrors(body.first.errors, '', false, value);
  const cut = new Set<string>();
  const cutValue = cutArrays(value, LISTED_ARRAY_ITEMS, '', cut);
  const listed = body.all(cutValue)
    ? []
    : toFieldErrors(body.all.errors?.filter((e) => !cut.has(e.instancePath) || TRUE_OF_A_CUT_ARRAY.has(e.keyword)), '', false, cutValue);
  const missing = first.filter((f) => !listed.some((l) => l.field === f.field && l.message === f.message));
  return [...missing, ...listed];
}

/**
 * `value` with every array longer than `most` cut to its first `most` items (their JSON
 * pointers added to `cut`); `value` itself when none is.
 */
function cutArrays(value: unknown, most: number, at: string, cut: Set<string>): unknown {
  if (Array.isArray(value)) {
    let changed = value.length > most;
    if (changed) cut.add(at);
    const items = (changed ? value.slice(0, most) : value).map((item: unknown, i: number) => {
      const kept = cutArrays(item, most, `${at}/${i}`, cut);
      if (kept !== item) changed = true;
      return kept;
    });
    return changed ? items : value;
  }
  if (value === null || typeof value !== 'object') return value;
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const kept = cutArrays(item, most, `${at}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`, cut);
    if (kept !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = kept;
  }
  return copy ?? value;
}

/** Keywords whose values are data, not schemas: a `$ref` key in them is not a reference. */
const DATA_KEYWORDS = new Set(['example', 'examples', 'const', 'default', 'enum']);

/**
 * The `$ref`s of the document that certainly do not resolve, each with where it is: a
 * JSON pointer into the document (`#/...`, percent-decoded) with nothing there, outside
 * data (examples, defaults, enums, `x-` extensions) and outside a schema with an `$id` of
 * its own (its pointers are relative to it). Anything else (anchors, other documents) is
 * left to Ajv at first use, whose failure is then kept (see `compileSpec`). At most 20.
 */
function unresolvedRefs(document: OpenApiDocument): string[] {
  const found: string[] = [];
  const seen = new Set<object>();
  const stack: Array<{ node: unknown; at: string; scoped: boolean }> = [{ node: document, at: '#', scoped: false }];
  while (stack.length > 0 && found.length < 20) {
    const { node, at, scoped } = stack.pop()!;
    if (typeof node !== 'object' || node === null || seen.has(node)) continue;
    seen.add(node);
    const inner = scoped || (node !== document && typeof (node as { $id?: unknown }).$id === 'string');
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') {
        if (!inner && value.startsWith('#/') && !resolvesIn(document, value)) found.push(`${value} (from ${at})`);
      } else if (Array.isArray(node) || (!DATA_KEYWORDS.has(key) && !key.startsWith('x-'))) stack.push({ node: value, at: `${at}/${pointer(key)}`, scoped: inner });
    }
  }
  return found;
}

/** Whether a `#/...` pointer names something in the document (own properties only); true when it cannot be decoded (left to Ajv). */
function resolvesIn(document: OpenApiDocument, ref: string): boolean {
  let node: unknown = document;
  for (const raw of ref.slice(2).split('/')) {
    let part: string;
    try {
      part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return true;
    }
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, part)) return false;
    node = (node as Record<string, unknown>)[part];
  }
  return true;
}
