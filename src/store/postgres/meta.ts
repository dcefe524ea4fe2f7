import type { MetaRepository } from '../port.js';
import type { Db } from './db.js';
import type { Meta } from '../../records/index.js';

/** The single values of the sandbox as a whole (its id seed, default token, clocks) as rows of `meta`, one JSON value per key. */
export class PgMeta implements MetaRepository {
  constructor(private readonly db: () => Db) {}

  async get<K extends keyof Meta>(key: K): Promise<Meta[K] | undefined> {
    const { rows } = await this.db().query<{ value: Meta[K] }>('SELECT value FROM meta WHERE key = $1', [key]);
    return rows[0]?.value;
  }

  async set<K extends keyof Meta>(key: K, value: Meta[K]): Promise<void> {
    await this.db().query('INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, JSON.stringify(value)]);
  }

  async setIfAbsent<K extends keyof Meta>(key: K, value: Meta[K]): Promise<Meta[K]> {
    // The no-op update makes the row come back when another replica inserted it first.
    const { rows } = await this.db().query<{ value: Meta[K] }>('INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = meta.value RETURNING value', [key, JSON.stringify(value)]);
    return rows[0]!.value;
  }
}
