import { validateHeaderName, validateHeaderValue } from 'node:http';
import { RuleViolation, type FieldError } from '../domain/errors.js';
import { isFieldPath } from './match.js';
import { faultMessages } from './messages.js';
import type { FaultAction, FaultRuleInput } from './types.js';

/** The fields each action type uses (the spec checks types and ranges; this checks the combination). */
const FIELDS: Record<FaultAction['type'], string[]> = {
  status: ['type', 'status', 'body', 'headers'],
  latency: ['type', 'ms', 'max_ms'],
  reset: ['type', 'after_ms'],
  hang: ['type'],
  dribble: ['type', 'bytes_per_second', 'interval_ms'],
};

/**
 * Checks what the schema cannot: fields that the action's type does not use, a
 * latency range the wrong way round, path globs and body field paths. Throws a 400
 * naming each field.
 */
export function checkRule(input: FaultRuleInput): FaultRuleInput {
  const errors: FieldError[] = [];
  const action = input.action as FaultAction & Record<string, unknown>;
  for (const key of Object.keys(action)) {
    if (!FIELDS[action.type].includes(key)) errors.push({ field: `action.${key}`, message: faultMessages.unusedField(action.type) });
  }
  if (action.type === 'latency' && action.max_ms !== undefined && action.max_ms < action.ms) {
    errors.push({ field: 'action.max_ms', message: faultMessages.maxBelowMin });
  }
  for (const [name, value] of Object.entries(action.type === 'status' ? (action.headers ?? {}) : {})) {
    try {
      validateHeaderName(name);
      validateHeaderValue(name, value);
    } catch {
      errors.push({ field: `action.headers.${name}`, message: faultMessages.badHeader });
    }
  }
  if (input.match?.path !== undefined && !input.match.path.startsWith('/')) errors.push({ field: 'match.path', message: faultMessages.badGlob });
  for (const key of Object.keys(input.match?.body ?? {})) {
    if (!isFieldPath(key)) errors.push({ field: `match.body.${key}`, message: faultMessages.badBodyPath });
  }
  if (errors.length > 0) throw new RuleViolation(errors, faultMessages.invalidRule);
  return input;
}
