/** The embedded adapter: every record in memory, made durable through the journaled file (or kept in memory only). */

export { realDataPath, writeWarnings } from './file/index.js';
export type { StoreFileSystem } from './file/index.js';
export { EmbeddedStorage } from './storage.js';
