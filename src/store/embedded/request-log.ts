import type { JournalEntry, RequestFilter } from '../../records/index.js';
import type { RequestLogRepository } from '../port.js';
import { BoundedLog } from './bounded-log.js';

/**
 * The request journal of the embedded store: kept in memory only, bounded per client
 * (a restart clears it). It is diagnostic, written on every request; journaling it
 * to the data file would double the writes of every request for no lasting value.
 */
export class MemoryRequestLog implements RequestLogRepository {
  private readonly byClient = new Map<string, BoundedLog<JournalEntry>>();

  constructor(readonly size: number) {}

  async append(clientId: string, entry: JournalEntry): Promise<void> {
    if (this.size <= 0) return;
    let entries = this.byClient.get(clientId);
    if (!entries) {
      entries = new BoundedLog<JournalEntry>(this.size);
      this.byClient.set(clientId, entries);
    }
    // Entries close out of arrival order now and then: each goes after the last that arrived before it.
    entries.add(entry, (kept) => kept.id > entry.id);
  }

  async list(clientId: string, filter: RequestFilter): Promise<JournalEntry[]> {
    return (
      this.byClient.get(clientId)?.filter((e) => {
        const at = Date.parse(e.at);
        return (
          (filter.operationId === undefined || e.operation_id === filter.operationId) &&
          (filter.status === undefined || e.status === filter.status) &&
          (filter.since === undefined || at >= filter.since) &&
          (filter.until === undefined || at <= filter.until)
        );
      }) ?? []
    );
  }

  async clear(clientId: string): Promise<number> {
    const count = this.byClient.get(clientId)?.length ?? 0;
    this.byClient.delete(clientId);
    return count;
  }

  async prune(olderThan: number, clientId?: string): Promise<number> {
    let removed = 0;
    const logs = clientId === undefined ? this.byClient.values() : [this.byClient.get(clientId)].filter((log) => log !== undefined);
    for (const entries of logs) removed += entries.retain((e) => Date.parse(e.at) >= olderThan);
    return removed;
  }
}
