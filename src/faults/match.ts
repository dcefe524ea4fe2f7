import { isDeepStrictEqual } from 'node:util';
import type { OperationInput } from '../requests/index.js';
import { globMatches, valueAt } from '../shared/index.js';
import type { FaultMatch } from '../records/index.js';

/** Whether a request meets every criterion of a rule's match. */
export function matches(match: FaultMatch, input: OperationInput): boolean {
  if (match.method !== undefined && match.method.toUpperCase() !== input.method.toUpperCase()) return false;
  if (match.operation_id !== undefined && match.operation_id !== input.operation.operationId) return false;
  if (match.path !== undefined && !globMatches(match.path, input.path)) return false;
  for (const [name, value] of Object.entries(match.headers ?? {})) {
    if (input.headers[name.toLowerCase()] !== value) return false;
  }
  for (const [path, value] of Object.entries(match.body ?? {})) {
    if (!isDeepStrictEqual(valueAt(input.body, path), value)) return false;
  }
  return true;
}
