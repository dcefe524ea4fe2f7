import type { ClientSettingsRepository } from '../port.js';
import { CLIENTS } from './collections.js';
import { stored } from './stored.js';
import type { Access } from './unit-of-work.js';
import { insertNew, updateAt } from './versioned-writes.js';
import type { ClientSettings, Stored } from '../../records/index.js';

/** Each client's settings, one record per client. */
export class EmbeddedSettings implements ClientSettingsRepository {
  constructor(private readonly access: Access) {}

  async get(clientId: string): Promise<Stored<ClientSettings> | undefined> {
    return stored(this.access.get<ClientSettings>(CLIENTS, clientId));
  }

  async put(settings: ClientSettings | Stored<ClientSettings>): Promise<Stored<ClientSettings>> {
    const what = `The settings of client ${settings.client_id}`;
    if ('version' in settings) return updateAt(this.access, CLIENTS, settings.client_id, settings, what);
    return insertNew<ClientSettings>(this.access, CLIENTS, settings.client_id, settings, what);
  }
}
