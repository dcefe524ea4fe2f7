import type { MetaRepository } from '../port.js';
import { META } from './collections.js';
import type { Access } from './unit-of-work.js';
import type { Meta } from '../../records/index.js';

/** The sandbox's own facts (see Meta), one record per key. */
export class EmbeddedMeta implements MetaRepository {
  constructor(private readonly access: Access) {}

  async get<K extends keyof Meta>(key: K): Promise<Meta[K] | undefined> {
    return this.access.get<Meta[K]>(META, key);
  }

  async set<K extends keyof Meta>(key: K, value: Meta[K]): Promise<void> {
    this.access.put(META, key, value);
  }

  async setIfAbsent<K extends keyof Meta>(key: K, value: Meta[K]): Promise<Meta[K]> {
    const kept = this.access.get<Meta[K]>(META, key);
    if (kept !== undefined) return kept;
    this.access.put(META, key, value);
    return value;
  }
}
