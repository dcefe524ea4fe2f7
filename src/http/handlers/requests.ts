import { clientOf, json, listInParts, timeField, type HandlerMap } from '../handler.js';
import type { RequestLogRepository } from '../../store/index.js';
import { checkRequestMatch, countMatching, type PendingAppends, type RequestMatch } from '../../requests/index.js';
import { RuleViolation, unmatchableCriteria, type MatchableOperation, type OperationCriteria } from '../../shared/index.js';

/**
 * `/__sandbox/requests`: the calling client's journal, filtered, counted, and clearing it.
 * A criterion no request of the served spec (`operations`) can meet (an operation_id it
 * does not have, a method or path glob none of its operations takes) is a 400: the journal
 * keeps requests of its operations only, and a count of 0 would read as "the client never
 * sent it".
 */
export function requestHandlers(journal: RequestLogRepository, pending: PendingAppends, operations: readonly MatchableOperation[]): HandlerMap {
  // Without their path parameters' patterns: a request whose path breaks one is answered 400 and journaled, so a count may ask for it.
  const journaled = operations.map(({ operationId, method, path, body }) => ({ operationId, method, path, ...(body === undefined ? {} : { body }) }));
  const meetable = (criteria: OperationCriteria): void => {
    const errors = unmatchableCriteria(criteria, journaled, '');
    if (errors.length > 0) throw new RuleViolation(errors, 'The request match is not valid; see errors.');
  };
  return {
    listRequests: async (input) => {
      const { operation_id, status, since, until, limit } = input.query as { operation_id?: string; status?: number; since?: string; until?: string; limit?: number };
      const time = (field: string, text: string | undefined): number | undefined => (text === undefined ? undefined : timeField(field, text));
      meetable({ operation_id });
      await pending.settled(clientOf(input).id);
      const requests = await journal.list(clientOf(input).id, { operationId: operation_id, status, since: time('since', since), until: time('until', until) });
      // A client's journal may hold a thousand entries of 16 KiB each: `limit` reads the newest few.
      return listInParts({ total: requests.length, size: journal.size }, 'requests', limit === undefined ? requests : requests.slice(-limit), undefined, input.turn);
    },
    countRequests: async (input) => {
      const match = checkRequestMatch((input.body ?? {}) as RequestMatch);
      meetable(match);
      const clientId = clientOf(input).id;
      await pending.settled(clientId);
      // The store filters what it can (operation, status); the rest is matched here, over at most --journal-size entries.
      const entries = await journal.list(clientId, { operationId: match.operation_id, status: match.status });
      return json(200, { count: countMatching(entries, match) });
    },
    clearRequests: async (input) => {
      await pending.settled(clientOf(input).id);
      return json(200, { success: true, removed: await journal.clear(clientOf(input).id) });
    },
  };
}
