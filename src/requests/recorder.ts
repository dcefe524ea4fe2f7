import type { Request, RequestHandler, Response } from 'express';
import { servedRequest, type ServedRequest } from '../http/mount.js';
import type { Services } from '../services.js';
import type { JournalEntry, RequestJournal } from './journal.js';

const REDACTED = '[redacted]';
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization']);

function redacted(headers: Request['headers']): JournalEntry['headers'] {
  const copy: JournalEntry['headers'] = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) copy[name] = SECRET_HEADERS.has(name) ? REDACTED : value;
  }
  return copy;
}

function entryOf(id: number, at: number, started: bigint, served: ServedRequest, req: Request, res: Response): JournalEntry {
  return {
    id,
    at: new Date(at).toISOString(),
    method: req.method,
    path: req.path,
    query: { ...(req.query as Record<string, unknown>) },
    operation_id: served.input.operation.operationId,
    headers: redacted(req.headers),
    body: (req.body as unknown) ?? null,
    status: res.headersSent ? res.statusCode : null,
    duration_ms: Number(process.hrtime.bigint() - started) / 1e6,
    violations: served.violations,
    aborted: !res.writableFinished,
  };
}

/**
 * Express middleware that journals every authenticated provider request once its
 * answer has ended, and with `--strict` logs one warning per field a request got
 * wrong. Requests that fail authentication have no client and are not journaled.
 */
export function journalRecorder(journal: RequestJournal, services: Services): RequestHandler {
  const { provider } = services.specs;
  return (req, res, next) => {
    const id = journal.nextId();
    const at = services.clock.now();
    const started = process.hrtime.bigint();
    res.once('close', () => {
      const served = servedRequest(res);
      const client = served?.input.client;
      if (!served || !client || provider.byId.get(served.input.operation.operationId) !== served.input.operation) return;
      journal.record(client.id, entryOf(id, at, started, served, req, res));
      if (!services.options.strict) return;
      for (const { field, message } of served.violations) {
        services.logger.warn({ client: client.id, op: served.input.operation.operationId, field }, `spec violation in ${req.method} ${req.path}: ${field} ${message}`);
      }
    });
    next();
  };
}
