/** The storage port (`Storage`: typed repositories and one unit of work), and opening the adapter the options name. */

export { realDataPath } from './embedded/index.js';
export type { StoreFileSystem } from './embedded/index.js';
export { closeRefusedStart, openStorage } from './open.js';
export type { OrderRepository, Repositories, RequestLogRepository, RequestScope, SharedClockRepository, Signals, Storage } from './port.js';
export { SettingsWriter, emptySettings } from './settings-writer.js';
