import { declaresABody, domainMessages, isJsonObject, isJsonType, type FieldError } from '../../shared/index.js';
import { ApiError, invalid, messages } from '../errors.js';
import type { Exchange } from './exchange.js';

/**
 * Stage 6, validate: the content type, then the operation's schemas (path, query,
 * headers, body) as the spec compiled them. Throws the 415, or the 400 naming each field.
 */
export function validate({ op, input, req, bodyVerdict }: Exchange): void {
  if (op.body !== 'none' && declaresABody(req.headers) && !isJsonType(req.headers['content-type'])) {
    throw new ApiError(415, messages.unsupportedMediaType(req.headers['content-type'] ?? 'none'), [{ field: 'header.content-type', message: 'must be application/json' }]);
  }
  // A large body the worker checked is not checked again: its problems (none: valid) come after the parameters', as the body's own would.
  const checked = bodyVerdict !== undefined && 'problems' in bodyVerdict;
  const bodyProblems = checked ? bodyVerdict.problems : [];
  if (op.body === 'required' && input.body === undefined && bodyProblems.length === 0) throw invalid([{ field: 'body', message: messages.isRequired }], messages.bodyRequired);
  const problems = op.validateRequest({ path: input.params, query: input.query, headers: input.headers, body: checked ? undefined : input.body });
  problems.push(...unknownControlQuery(op, input.query));
  if (bodyProblems.length > 0) problems.push(...bodyProblems);
  // Said of the whole body only: a field named `body` (a request count's match) is no object either, in a body that is one.
  const whole = problems.length === 1 && problems[0]!.field === 'body' && problems[0]!.message === NOT_AN_OBJECT && !isJsonObject(input.body);
  if (problems.length > 0) throw invalid(problems, whole ? messages.notAnObject : undefined);
}

/** The schema check's word for a body that is not an object: a list (`[...]`) is told as a number or `null` is. */
const NOT_AN_OBJECT = 'must be a JSON object';

/**
 * A control call's query parameter it does not know: refused, naming it and the ones the call
 * takes, since a misspelt filter (`?endpointId=`) would answer for everything and read as a
 * pass. The provider's operations ignore such parameters, as the provider does, and so do
 * the calls that take no token (health, metrics, the specs, POD photos), which probes,
 * scrapers and image proxies call with parameters of their own (`?_=1700000000`). A bracketed
 * form of a known one (`?limit[a]=1`) is the known one's problem, told by the schema check.
 */
function unknownControlQuery(op: Exchange['op'], query: Record<string, unknown>): FieldError[] {
  if (!op.path.startsWith('/__sandbox/') || !op.secured) return [];
  const message = domainMessages.notAParameter(op.queryNames);
  return Object.keys(query)
    .filter((key) => !op.queryNames.has(key.split('[')[0]!))
    .slice(0, 100)
    .map((key) => ({ field: key, message }));
}
