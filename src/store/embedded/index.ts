export { realDataPath, writeWarnings } from './file/index.js';
export type { StoreFileSystem } from './file/index.js';
export { EmbeddedStorage } from './storage.js';
