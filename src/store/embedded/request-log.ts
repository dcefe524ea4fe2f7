import type { JournalEntry } from '../../requests/types.js';
import type { RequestFilter, RequestLogRepository } from '../port.js';

/**
 * The request journal of the embedded store: kept in memory only, bounded per client
 * (a restart clears it). It is diagnostic, written on every request; journaling it
 * to the data file would double the writes of every request for no lasting value.
 */
export class MemoryRequestLog implements RequestLogRepository {
  private readonly byClient = new Map<string, JournalEntry[]>();

  constructor(readonly size: number) {}

  async append(clientId: string, entry: JournalEntry): Promise<void> {
    if (this.size <= 0) return;
    const entries = this.byClient.get(clientId) ?? [];
    let at = entries.length;
    while (at > 0 && entries[at - 1]!.id > entry.id) at--;
    entries.splice(at, 0, entry);
    if (entries.length > this.size) entries.splice(0, entries.length - this.size);
    this.byClient.set(clientId, entries);
  }

  async list(clientId: string, filter: RequestFilter): Promise<JournalEntry[]> {
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

  async clear(clientId: string): Promise<number> {
    const count = this.byClient.get(clientId)?.length ?? 0;
    this.byClient.delete(clientId);
    return count;
  }

  async prune(olderThan: number): Promise<number> {
    let removed = 0;
    for (const [clientId, entries] of this.byClient) {
      const kept = entries.filter((e) => Date.parse(e.at) >= olderThan);
      removed += entries.length - kept.length;
      this.byClient.set(clientId, kept);
    }
    return removed;
  }
}
