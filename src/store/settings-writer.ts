import type { ClientSettings } from '../records/index.js';
import type { Repositories, Storage } from './port.js';
import { Conflict, OneAtATime } from '../shared/index.js';
/** Tries of a unit that meets another change of the client's settings row. */
export const SETTINGS_ATTEMPTS = 5;

/** A client's settings as they are before anything is kept for it. */
export const emptySettings = (clientId: string): ClientSettings => ({ client_id: clientId, webhook: null, generated_secret: null, faults: [], fault_seq: 0 });

/**
 * The one way to write a client's settings row (webhook endpoint, generated secret,
 * fault rules, clock). On PostgreSQL each write checks the version it read, so two
 * writes that met would answer 409 "changed by another request meanwhile", which the
 * provider never sends: here a client's units run one at a time in this process, and
 * one that still meets a Conflict (another replica's write) runs again from the start,
 * on the row as it is then, at most SETTINGS_ATTEMPTS times.
 *
 * Never call it from inside a unit of the same client: that unit would wait for itself.
 *
 * @example
 * const writer = new SettingsWriter(storage);
 * await writer.change('client-a', (settings) => ({ settings: { ...settings, faults: [] }, result: settings.faults.length }));
 */
export class SettingsWriter {
  private readonly queue = new OneAtATime();

  constructor(private readonly storage: Pick<Storage, 'transaction'>) {}

  /**
   * Runs `unit` in a transaction of its own, once the client's units queued before it
   * have settled. It may run more than once: it must read what it changes inside.
   */
  unit<T>(clientId: string, unit: (tx: Repositories) => Promise<T>): Promise<T> {
    return this.queue.run(clientId, () => this.tried(unit));
  }

  /**
   * Changes the client's settings as `edit` says, from the row as it stands (empty when
   * there is none yet); `settings: undefined` leaves the row as it is.
   */
  change<T>(clientId: string, edit: (settings: ClientSettings) => { settings: ClientSettings | undefined; result: T }): Promise<T> {
    return this.unit(clientId, async (tx) => {
      const current = await tx.settings.get(clientId);
      const { settings, result } = edit(current ?? emptySettings(clientId));
      if (settings) await tx.settings.put(current ? { ...settings, version: current.version } : settings);
      return result;
    });
  }

  private async tried<T>(unit: (tx: Repositories) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.storage.transaction(unit);
      } catch (error) {
        if (!(error instanceof Conflict) || attempt === SETTINGS_ATTEMPTS) throw error;
        // A little apart, so two replicas that met do not meet again at once.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
      }
    }
  }
}
