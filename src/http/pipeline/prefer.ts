import { createRequire } from 'node:module';
import { domainMessages, RuleViolation } from '../../shared/index.js';
import type { Interceptor, OperationInput } from '../handler.js';
import type { OpenApiDocument } from '../../spec/index.js';
import { documentedAnswer, prismOperation, requestKey, type PrismOperation } from '../spec-answer.js';

/** parse-prefer-header (the parser Prism uses) ships no types. */
const parsePreferHeader = createRequire(import.meta.url)('parse-prefer-header') as (header: string | string[] | undefined) => Record<string, string | true>;

/** What a request asks for with `Prefer` or the `__code`, `__example`, `__dynamic` query parameters. */
export interface Preference {
  code?: number;
  example?: string;
  dynamic?: boolean;
  /** Seed of generated data for this request only (Prefer `seed=`). */
  seed?: string;
}

const QUERY = { code: '__code', example: '__example', dynamic: '__dynamic' } as const;

/** One raw preference, from the header when it has it, else from the query; with the field to blame. */
function rawPreference(input: OperationInput, header: Record<string, string | true>, name: keyof typeof QUERY | 'seed') {
  if (header[name] !== undefined) return { value: header[name], field: 'header.prefer' };
  if (name === 'seed') return undefined;
  const value = input.query[QUERY[name]];
  if (value === undefined) return undefined;
  const field = `query.${QUERY[name]}`;
  if (typeof value !== 'string') throw new RuleViolation([{ field, message: domainMessages.givenOnce }]);
  return { value, field };
}

/**
 * Reads the preference of a request: `Prefer: code=404, example=notFound, dynamic=true`
 * (RFC 7240, Prism's convention) or the query fallbacks `__code`, `__example`,
 * `__dynamic`. The header wins per preference. Throws a 400 naming the field for
 * a value that is not one.
 *
 * @example parsePreference(input) // { code: 404 } for "Prefer: code=404"
 */
export function parsePreference(input: OperationInput): Preference {
  const header = parsePreferHeader(input.headers.prefer);
  // `dynamic=true; seed=7` makes the seed a parameter of dynamic, which the parser names `dynamicSeed`: the same request as `dynamic=true, seed=7`.
  const parameterSeed = header.dynamicSeed ?? header.codeSeed ?? header.exampleSeed;
  if (header.seed === undefined && parameterSeed !== undefined) header.seed = parameterSeed;
  const preference: Preference = {};
  const code = rawPreference(input, header, 'code');
  if (code) {
    if (typeof code.value !== 'string' || !/^[1-5]\d\d$/.test(code.value)) throw new RuleViolation([{ field: code.field, message: 'code must be an HTTP status such as 404' }]);
    preference.code = Number(code.value);
  }
  const example = rawPreference(input, header, 'example');
  if (example) {
    if (typeof example.value !== 'string') throw new RuleViolation([{ field: example.field, message: 'example must name an example of the spec' }]);
    preference.example = example.value;
  }
  const dynamic = rawPreference(input, header, 'dynamic');
  if (dynamic) {
    const text = dynamic.value === true ? 'true' : dynamic.value.toLowerCase();
    if (text !== 'true' && text !== 'false') throw new RuleViolation([{ field: dynamic.field, message: 'dynamic must be true or false' }]);
    preference.dynamic = text === 'true';
  }
  const seed = rawPreference(input, header, 'seed');
  if (seed && typeof seed.value === 'string') preference.seed = seed.value;
  return preference;
}

/** The field a preference came from: the header when it has that preference (it wins), else the query. */
const preferField = (input: OperationInput, name: 'code' | 'example'): string => (parsePreferHeader(input.headers.prefer)[name] !== undefined ? 'header.prefer' : `query.${QUERY[name]}`);

/** The names of the examples each documented status offers, from Prism's model of the operation. */
function examplesByStatus(operation: PrismOperation): Map<number, string[]> {
  const byStatus = new Map<number, string[]>();
  for (const response of operation.responses) {
    if (!/^\d{3}$/.test(response.code)) continue;
    const names = (response.contents ?? []).flatMap((content) => (content.examples ?? []).map((example) => example.key));
    byStatus.set(Number(response.code), [...new Set(names)]);
  }
  return byStatus;
}

/**
 * Checks a preference against what the operation documents, before Prism is asked:
 * a status it does not document, or an example it does not have, is our 400 naming
 * the field and listing what there is. An example without a code picks the status
 * that documents it (2xx first), where Prism would look in the lowest 2xx only.
 */
function checkedChoice(operation: PrismOperation, input: OperationInput, preference: Preference): { status?: number } {
  const examples = examplesByStatus(operation);
  const codes = [...examples.keys()].sort((a, b) => a - b);
  const operationId = input.operation.operationId;
  if (preference.code !== undefined && !codes.includes(preference.code)) {
    throw new RuleViolation(
      [{ field: preferField(input, 'code'), message: `code must be one of: ${codes.join(', ')}` }],
      `Status ${preference.code} is not documented for ${operationId}; the spec documents ${codes.join(', ')}.`,
    );
  }
  if (preference.example === undefined) return { status: preference.code };
  const wanted = preference.example;
  const success = codes.filter((c) => c >= 200 && c < 300);
  const candidates = preference.code !== undefined ? [preference.code] : [...success, ...codes.filter((c) => !success.includes(c))];
  const status = candidates.find((c) => examples.get(c)?.includes(wanted));
  if (status !== undefined) return { status };
  const known = candidates.flatMap((c) => (examples.get(c) ?? []).map((n) => `${n} (${c})`));
  throw new RuleViolation(
    [{ field: preferField(input, 'example'), message: known.length > 0 ? `example must be one of: ${known.join(', ')}` : 'there is no named example to choose from' }],
    `No example "${wanted}" is documented for ${operationId}${preference.code ? ` with status ${preference.code}` : ''}.`,
  );
}

/** A preference's value as RFC 7240 writes it: a token as it is, anything else an HTTP quoted-string (`"` and `\` escaped). */
const valueOf = (value: string): string => (/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(value) ? value : `"${value.replace(/["\\]/g, '\\$&')}"`);

/** What was applied: the seed only where it seeds something (generated data). */
const applied = (p: Preference): string =>
  [
    p.code !== undefined && `code=${p.code}`,
    p.example !== undefined && `example=${valueOf(p.example)}`,
    p.dynamic !== undefined && `dynamic=${p.dynamic}`,
    p.dynamic === true && p.seed !== undefined && `seed=${valueOf(p.seed)}`,
  ]
    .filter(Boolean)
    .join(', ');

/**
 * Errors on demand: a provider request with a preference is answered by Prism's
 * mocker with the spec's documented response for it, and never reaches its handler,
 * so nothing is stored. It still passes authentication and validation first, and the
 * operation's `checks` (those of its handler beyond the schema: a request the operation
 * would refuse gets that refusal, not a canned answer). Under
 * `--seed`, generated data is seeded per request (the same request, the same data).
 */
export function preferInterceptor(document: OpenApiDocument, seed: string | undefined, checks: Readonly<Record<string, (input: OperationInput) => void>> = {}): Interceptor {
  return async (input, next) => {
    const preference = parsePreference(input);
    if (preference.code === undefined && preference.example === undefined && preference.dynamic === undefined) return next();
    checks[input.operation.operationId]?.(input);
    const { status } = checkedChoice(await prismOperation(document, input.operation), input, preference);
    const requestSeed = preference.seed ?? (seed === undefined ? undefined : `${seed}|${requestKey(input)}|${status ?? ''}`);
    const reply = await documentedAnswer(document, input, { status, example: preference.example, dynamic: preference.dynamic, seed: requestSeed });
    input.mocked = true;
    return { ...reply, headers: { ...reply.headers, 'Preference-Applied': applied(preference) } };
  };
}
