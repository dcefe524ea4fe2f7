import { clientOf, json, listInParts, timeField, type HandlerMap } from '../handler.js';
import type { RequestLogRepository } from '../../store/index.js';
import { checkRequestMatch, countMatching, type PendingAppends, type RequestMatch } from '../../requests/index.js';

/** `/__sandbox/requests`: the calling client's journal, filtered, counted, and clearing it. */
export function requestHandlers(journal: RequestLogRepository, pending: PendingAppends): HandlerMap {
  return {
    listRequests: async (input) => {
      const { operation_id, status, since, until, limit } = input.query as { operation_id?: string; status?: number; since?: string; until?: string; limit?: number };
      const time = (field: string, text: string | undefined): number | undefined => (text === undefined ? undefined : timeField(`query.${field}`, text));
      await pending.settled(clientOf(input).id);
      const requests = await journal.list(clientOf(input).id, { operationId: operation_id, status, since: time('since', since), until: time('until', until) });
      // A client's journal may hold a thousand entries of 16 KiB each: `limit` reads the newest few.
      return listInParts({ total: requests.length, size: journal.size }, 'requests', limit === undefined ? requests : requests.slice(-limit));
    },
    countRequests: async (input) => {
      const match = checkRequestMatch((input.body ?? {}) as RequestMatch);
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
