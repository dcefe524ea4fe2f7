import type { ErrorObject } from 'ajv';
import { domainMessages, tooManyEntries, type FieldError } from '../shared/index.js';

/** Messages for the value formats the specs use, keyed by their pattern. */
const PATTERN_MESSAGES: Record<string, string> = {
  '^[0-9]+$': 'must be numeric text, digits only (for example "12")',
  '^[0-9]+(\\.[0-9]+)?$': 'must be numeric text such as "1.5" or "2" (digits, a point only between digits, no sign)',
  '^\\+?[0-9]{8,15}$': 'must be a phone number of 8 to 15 digits, optionally starting with "+"',
  '^-?(90(\\.0+)?|[0-8]?[0-9](\\.[0-9]+)?)$': 'must be decimal degrees from -90 to 90 as text, for example "-6.2297"',
  '^-?(180(\\.0+)?|(1[0-7][0-9]|0?[0-9]{1,2})(\\.[0-9]+)?)$': 'must be decimal degrees from -180 to 180 as text, for example "106.8531"',
  '^[A-Za-z0-9-]+$': 'must be letters, digits and dashes only',
  '^[hH][tT][tT][pP][sS]?://': 'must start with http:// or https:// (nothing before it, a space included)',
  '^whsec_(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$': domainMessages.webhookSecret,
};

/** A text parameter that came as a list (given twice) or in a bracketed form. */
export const GIVEN_ONCE = domainMessages.givenOnce;
/** What a required field or parameter that is absent is told. */
export const IS_REQUIRED = domainMessages.isRequired;

/**
 * Parameters arrive as text and are converted: their messages must not talk of JSON types.
 * A text parameter is refused by type only when it came as a list: given twice (`?a=1&a=2`).
 */
const PARAMETER_TYPE_HINTS: Record<string, string> = {
  string: GIVEN_ONCE,
  integer: 'must be a whole number',
  number: 'must be a number',
  boolean: 'must be true or false',
};

/** A type among several a field takes (`step`: a step's name or its index), as one alternative of the message. */
const ONE_OF_TYPES: Record<string, string> = {
  string: 'text',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  array: 'a JSON array',
  object: 'a JSON object',
  null: 'null',
};

const TYPE_HINTS: Record<string, string> = {
  string: 'must be a JSON string (send numbers as text, for example "1")',
  integer: 'must be a JSON integer (for example 1): not text, not a fraction',
  number: 'must be a JSON number',
  array: 'must be a JSON array',
  object: 'must be a JSON object',
  boolean: 'must be true or false',
};

/** `/items/1/item_weight` → `items[1].item_weight`; a prefix names the part of the request. */
export function fieldOf(instancePath: string, prefix = ''): string {
  let field = prefix;
  for (const raw of instancePath.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    field += /^\d+$/.test(part) ? `[${part}]` : field === '' ? part : `.${part}`;
  }
  return field === '' ? 'body' : field;
}

/** The value at an Ajv instance path of `data` (undefined where there is none). */
function valueAt(data: unknown, instancePath: string): unknown {
  let value = data;
  for (const raw of instancePath.split('/').slice(1)) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return value;
}

function messageOf(error: ErrorObject, parameter: boolean, data: unknown): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return IS_REQUIRED;
    case 'type':
      if (Array.isArray(p.type)) return `must be ${p.type.map((t) => ONE_OF_TYPES[String(t)] ?? String(t)).join(' or ')}`;
      // The hint about numbers as text is for a number sent where text is wanted, not for a null or a list.
      if (!parameter && p.type === 'string' && data !== undefined && typeof valueAt(data, error.instancePath) !== 'number') return 'must be a JSON string';
      return (parameter ? PARAMETER_TYPE_HINTS[String(p.type)] : undefined) ?? TYPE_HINTS[String(p.type)] ?? `must be of type ${String(p.type)}`;
    case 'pattern':
      return PATTERN_MESSAGES[String(p.pattern)] ?? `must match the pattern ${String(p.pattern)}`;
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters long`;
    case 'maxLength':
      return `must be at most ${String(p.limit)} characters long`;
    case 'minItems':
      return `must hold at least ${String(p.limit)} ${p.limit === 1 ? 'entry' : 'entries'}`;
    case 'maxItems':
      return tooManyEntries(Number(p.limit));
    case 'enum':
      return `must be one of: ${(p.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'additionalProperties':
      return 'is not a known field';
    case 'minProperties':
      return p.limit === 1 ? 'must set at least one field' : `must set at least ${String(p.limit)} fields`;
    case 'maxProperties':
      return `must set at most ${String(p.limit)} fields`;
    case 'format':
      if (p.format === 'int32') return 'must be a whole number from -2147483648 to 2147483647';
      if (p.format === 'int64') return 'must be a whole number';
      if (p.format === 'date-time') return 'must be a date and a time with its offset, as RFC 3339 writes one: 2026-01-01T00:00:00Z';
      return p.format === 'uri' ? 'must be an absolute URL with no spaces in it, and what a URL escapes percent-encoded (< > " { } | \\ ^ ` and letters beyond ASCII: %3C for <; a % only before two hex digits, a # only once: what follows it is one fragment, its own # as %23), a host of other than ASCII letters in its punycode form, xn--…' : (error.message ?? 'is not valid');
    default:
      return error.message ?? 'is not valid';
  }
}

/**
 * Turns Ajv's errors into one `FieldError` per field, named the way a client writes
 * it (`items[1].receiver_phone`), with a message that says how to fix it.
 */
export function toFieldErrors(errors: ErrorObject[] | null | undefined, prefix = '', parameter = false, data?: unknown): FieldError[] {
  const byField = new Map<string, FieldError>();
  /** The fields whose message is a type's: a list of allowed values for the same field says more (`events[1]: 1`). */
  const byType = new Set<string>();
  for (const error of errors ?? []) {
    if (error.keyword === 'allOf' || error.keyword === 'if') continue;
    let field = fieldOf(error.instancePath, prefix);
    if (error.keyword === 'required') {
      const missing = String((error.params as { missingProperty: string }).missingProperty);
      field = field === 'body' ? missing : `${field}.${missing}`;
    }
    if (error.keyword === 'additionalProperties') {
      field = `${field === 'body' ? '' : `${field}.`}${String((error.params as { additionalProperty: string }).additionalProperty)}`;
    }
    if (byField.has(field) && !(error.keyword === 'enum' && byType.delete(field))) continue;
    byField.set(field, { field, message: messageOf(error, parameter, data) });
    if (error.keyword === 'type') byType.add(field);
  }
  return [...byField.values()].slice(0, 100);
}
