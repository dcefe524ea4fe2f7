import { Conflict } from '../../domain/errors.js';
import { applyReportChange, emptyReport, type ReportChange, type ReportRun, type ReportState } from '../../report/state.js';
import type { ReportRepository } from '../port.js';
import type { Db } from './repositories.js';

/** How often a change is tried again when another replica changed the report meanwhile. */
const ATTEMPTS = 8;

/** The readiness reports on PostgreSQL: one row per client, changed with a version check. */
export class PgReports implements ReportRepository {
  constructor(
    private readonly db: () => Db,
    readonly size: number,
  ) {}

  async get(clientId: string): Promise<ReportState> {
    return (await this.read(clientId))?.state ?? emptyReport(clientId);
  }

  async change(clientId: string, change: ReportChange): Promise<ReportState> {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
      const found = await this.read(clientId);
      const next = applyReportChange(found?.state ?? emptyReport(clientId), change, this.size);
      if (found) {
        const { rowCount } = await this.db().query('UPDATE readiness_reports SET state = $2, version = version + 1 WHERE client_id = $1 AND version = $3', [clientId, next, found.version]);
        if (rowCount === 1) return next;
      } else {
        const { rowCount } = await this.db().query('INSERT INTO readiness_reports (client_id, version, state) VALUES ($1, 1, $2) ON CONFLICT DO NOTHING', [clientId, next]);
        if (rowCount === 1) return next;
      }
    }
    throw new Conflict(`The readiness report of client ${clientId} kept changing under this change.`);
  }

  async start(clientId: string, run: ReportRun | null): Promise<void> {
    await this.db().query(
      'INSERT INTO readiness_reports (client_id, version, state) VALUES ($1, 1, $2) ON CONFLICT (client_id) DO UPDATE SET state = EXCLUDED.state, version = readiness_reports.version + 1',
      [clientId, emptyReport(clientId, run)],
    );
  }

  async clear(clientId: string): Promise<number> {
    const { rowCount } = await this.db().query('DELETE FROM readiness_reports WHERE client_id = $1', [clientId]);
    return rowCount ?? 0;
  }

  private async read(clientId: string): Promise<{ state: ReportState; version: number } | undefined> {
    const { rows } = await this.db().query<{ state: ReportState; version: number }>('SELECT state, version FROM readiness_reports WHERE client_id = $1', [clientId]);
    return rows[0];
  }
}
