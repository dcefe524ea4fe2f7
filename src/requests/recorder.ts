import type { Logger } from 'pino';
import type { ServedRequest } from '../http/served.js';
import type { RequestLogRepository } from '../store/port.js';
import type { JournalEntry } from './types.js';

const REDACTED = '[redacted]';
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization']);

function redacted(headers: ServedRequest['input']['headers']): JournalEntry['headers'] {
  const copy: JournalEntry['headers'] = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) copy[name] = SECRET_HEADERS.has(name) ? REDACTED : value;
  }
  return copy;
}

function entryOf(served: ServedRequest): JournalEntry {
  const { input } = served;
  return {
    id: served.seq,
    at: new Date(served.arrivedAt).toISOString(),
    method: served.method,
    path: input.path,
    query: input.query,
    operation_id: input.operation.operationId,
    headers: redacted(input.headers),
    body: input.body ?? null,
    status: served.status,
    duration_ms: served.durationMs,
    violations: served.violations,
    aborted: served.aborted,
  };
}

/**
 * Journals every authenticated provider request once its connection closes, and with
 * `--strict` logs one warning per field a request got wrong. Requests that fail
 * authentication have no client and are not journaled.
 */
export function journalRecorder(journal: RequestLogRepository, strict: boolean, logger: Logger): (served: ServedRequest) => void {
  return (served) => {
    const client = served.input.client;
    if (!client) return;
    void journal.append(client.id, entryOf(served)).catch((err: unknown) => logger.error({ err }, 'request journal failed'));
    if (!strict) return;
    for (const { field, message } of served.violations) {
      logger.warn({ client: client.id, op: served.input.operation.operationId, field }, `spec violation in ${served.method} ${served.input.path}: ${field} ${message}`);
    }
  };
}
