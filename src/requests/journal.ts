import type { FieldError } from '../domain/errors.js';

/** One provider request of a client, as `GET /__sandbox/requests` shows it. */
export interface JournalEntry {
  /** Increases with arrival; entries are listed in this order. */
  id: number;
  /** When the request arrived, on the sandbox clock (ISO 8601). */
  at: string;
  method: string;
  path: string;
  query: Record<string, unknown>;
  operation_id: string;
  /** Request headers, with Authorization redacted. */
  headers: Record<string, string | string[]>;
  /** The parsed JSON body, or null when there was none. */
  body: unknown;
  /** The status answered, or null when no status line was sent (reset, hang). */
  status: number | null;
  /** From arrival until the answer ended or the connection closed (real milliseconds). */
  duration_ms: number;
  /** The field errors of the 400 the request was rejected with: what it got wrong. */
  violations: FieldError[];
  /** True when the connection closed before the answer ended (a fault, or the client gave up). */
  aborted: boolean;
}

/** What `GET /__sandbox/requests` may filter on. */
export interface JournalFilter {
  operationId?: string;
  status?: number;
  /** Sandbox-clock epoch ms, inclusive. */
  since?: number;
  until?: number;
}

/**
 * The request journal: each client's most recent provider requests, in memory,
 * oldest first. When a client has `size` entries, the oldest is dropped for each new one.
 */
export class RequestJournal {
  private readonly byClient = new Map<string, JournalEntry[]>();
  private seq = 0;

  constructor(readonly size: number) {}

  /** The id of a request that has just arrived; entries are ordered by it. */
  nextId(): number {
    return ++this.seq;
  }

  /** Adds an entry (once its answer has ended) in arrival order, dropping the oldest beyond the size. */
  record(clientId: string, entry: JournalEntry): void {
    if (this.size <= 0) return;
    const entries = this.byClient.get(clientId) ?? [];
    let at = entries.length;
    while (at > 0 && entries[at - 1]!.id > entry.id) at--;
    entries.splice(at, 0, entry);
    if (entries.length > this.size) entries.splice(0, entries.length - this.size);
    this.byClient.set(clientId, entries);
  }

  list(clientId: string, filter: JournalFilter = {}): JournalEntry[] {
    return (this.byClient.get(clientId) ?? []).filter((e) => {
      const at = Date.parse(e.at);
      return (
        (filter.operationId === undefined || e.operation_id === filter.operationId) &&
        (filter.status === undefined || e.status === filter.status) &&
        (filter.since === undefined || at >= filter.since) &&
        (filter.until === undefined || at <= filter.until)
      );
    });
  }

  /** Forgets every entry that arrived before `olderThan` (sandbox-clock epoch ms); returns how many (`--retention`). */
  prune(olderThan: number): number {
    let removed = 0;
    for (const [clientId, entries] of this.byClient) {
      const kept = entries.filter((e) => Date.parse(e.at) >= olderThan);
      removed += entries.length - kept.length;
      this.byClient.set(clientId, kept);
    }
    return removed;
  }

  /** Forgets a client's entries; returns how many. */
  clear(clientId: string): number {
    const count = this.byClient.get(clientId)?.length ?? 0;
    this.byClient.delete(clientId);
    return count;
  }
}
