import { Conflict, domainMessages, remembered } from '../../shared/index.js';
import type { ClientSettingsRepository } from '../port.js';
import { isUniqueViolation, type Db } from './db.js';
import { pointRead } from './point-reads.js';
import { dataOf, stored } from './rows.js';
import type { ClientSettings, Stored } from '../../records/index.js';

/** Settings read along with a request's clock (see PostgresStorage.requestScope), by client: each used once. */
export type Prefetched = Map<string, { data: ClientSettings; version: number } | undefined>;

const SETTINGS_OF = pointRead('SELECT data, version FROM client_settings WHERE client_id = $1');

/** Each client's settings as a row of `client_settings`, written with a version check. */
export class PgSettings implements ClientSettingsRepository {
  /**
   * The unit's own repository only (see `ofUnit`): each client's settings as the unit
   * read or wrote them, read once per unit, so that a job can ask for them beside its
   * first read (one round trip) and the code that needs them later finds them. A write the
   * unit makes replaces them; one another unit made meanwhile is a Conflict at this unit's
   * write, as with any record.
   */
  private readonly inUnit?: Map<string, Promise<Stored<ClientSettings> | undefined>>;

  constructor(
    private readonly db: () => Db,
    /** The current request's settings read along with its clock, if any. */
    private readonly prefetched: () => Prefetched | undefined = () => undefined,
    /** True for the repository a unit of work makes for itself, which lives as long as the unit (one attempt of it). */
    ofUnit = false,
  ) {
    if (ofUnit) this.inUnit = new Map();
  }

  async get(clientId: string): Promise<Stored<ClientSettings> | undefined> {
    const db = this.db();
    const prefetched = this.prefetched();
    // Outside a unit of work only: a unit reads what it changes afresh.
    if (!db.later && prefetched?.has(clientId)) {
      const row = prefetched.get(clientId);
      prefetched.delete(clientId);
      return row && stored<ClientSettings>(row.data, row.version);
    }
    // A failed read is not kept: the unit fails with it, or asks again.
    return this.inUnit ? remembered(this.inUnit, clientId, () => this.read(db, clientId)) : this.read(db, clientId);
  }

  private async read(db: Db, clientId: string): Promise<Stored<ClientSettings> | undefined> {
    const { rows } = await db.query<{ data: ClientSettings; version: number }>(SETTINGS_OF, [clientId]);
    return rows[0] && stored<ClientSettings>(rows[0].data, rows[0].version);
  }

  async put(settings: ClientSettings | Stored<ClientSettings>): Promise<Stored<ClientSettings>> {
    this.prefetched()?.delete(settings.client_id);
    this.inUnit?.delete(settings.client_id);
    const written = await this.write(settings);
    this.inUnit?.set(settings.client_id, Promise.resolve(written));
    return written;
  }

  private async write(settings: ClientSettings | Stored<ClientSettings>): Promise<Stored<ClientSettings>> {
    const what = `The settings of client ${settings.client_id}`;
    const { data, json } = dataOf(settings as ClientSettings & { version?: number });
    if ('version' in settings) {
      const { rowCount } = await this.db().query('UPDATE client_settings SET data = $2, version = version + 1 WHERE client_id = $1 AND version = $3', [
        settings.client_id,
        json,
        settings.version,
      ]);
      if (rowCount !== 1) throw new Conflict(domainMessages.staleVersion(what));
      return stored<ClientSettings>(data, settings.version + 1);
    }
    try {
      await this.db().query('INSERT INTO client_settings (client_id, version, data) VALUES ($1, 1, $2)', [settings.client_id, json]);
    } catch (error) {
      if (isUniqueViolation(error)) throw new Conflict(`${what} already exist.`);
      throw error;
    }
    return stored<ClientSettings>(data, 1);
  }
}
