import { clientOf, json, type HandlerMap } from '../http/handler.js';
import type { RequestLogRepository } from '../store/port.js';

/** `/__sandbox/requests`: the calling client's journal, filtered, and clearing it. */
export function requestHandlers(journal: RequestLogRepository): HandlerMap {
  return {
    listRequests: async (input) => {
      const { operation_id, status, since, until } = input.query as { operation_id?: string; status?: number; since?: string; until?: string };
      const requests = await journal.list(clientOf(input).id, {
        operationId: operation_id,
        status,
        since: since === undefined ? undefined : Date.parse(since),
        until: until === undefined ? undefined : Date.parse(until),
      });
      return json(200, { total: requests.length, size: journal.size, requests });
    },
    clearRequests: async (input) => json(200, { success: true, removed: await journal.clear(clientOf(input).id) }),
  };
}
