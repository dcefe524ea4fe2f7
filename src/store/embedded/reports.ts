import { applyReportChange, emptyReport, type ReportChange, type ReportRun, type ReportState } from '../../report/state.js';
import type { ReportRepository } from '../port.js';

/**
 * A copy the caller may change without touching what is kept: `applyReportChange` never
 * changes a kept event, mark or check in place, so copying the containers is enough
 * (a deep copy of a thousand events on every request would not be).
 */
const copyOf = (state: ReportState): ReportState => ({ ...state, counts: { ...state.counts }, marks: { ...state.marks }, checks: [...state.checks], events: [...state.events] });

/**
 * The readiness reports of the embedded store: in memory, like the request journal
 * (written on every request; a restart clears them).
 */
export class MemoryReports implements ReportRepository {
  private readonly byClient = new Map<string, ReportState>();

  constructor(readonly size: number) {}

  async get(clientId: string): Promise<ReportState> {
    return copyOf(this.byClient.get(clientId) ?? emptyReport(clientId));
  }

  async change(clientId: string, change: ReportChange): Promise<void> {
    this.byClient.set(clientId, applyReportChange(this.byClient.get(clientId) ?? emptyReport(clientId), structuredClone(change), this.size));
  }

  async start(clientId: string, run: ReportRun | null): Promise<void> {
    this.byClient.set(clientId, emptyReport(clientId, run));
  }

  async clear(clientId: string): Promise<number> {
    return this.byClient.delete(clientId) ? 1 : 0;
  }
}
