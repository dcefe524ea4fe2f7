export { realDataPath } from './embedded/index.js';
export type { StoreFileSystem } from './embedded/index.js';
export { openStorage } from './open.js';
export type { OrderRepository, Repositories, RequestLogRepository, RequestScope, SharedClockRepository, Storage } from './port.js';
export { JOB_KINDS } from './port.js';
export { SettingsWriter, emptySettings } from './settings-writer.js';
// Re-exported while clock/, http/ and webhooks/dispatcher.ts move their imports to records/ (issue 41).
export type { ClaimOptions, ClaimedJob, ClientClock, ClockLead, JobKind, KeptClocks, Meta, Stored } from '../records/index.js';
