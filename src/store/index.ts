export { realDataPath } from './embedded/index.js';
export type { StoreFileSystem } from './embedded/index.js';
export { openStorage } from './open.js';
export { JOB_KINDS } from './port.js';
export type { ClaimOptions, ClaimedJob, ClientClock, ClientSettings, ClockLead, EndpointSetting, JobKind, KeptClocks, Meta, OrderQuery, OrderRepository, Page, Repositories, RequestLogRepository, RequestScope, SharedClockRepository, Storage, Stored } from './port.js';
export { SettingsWriter, emptySettings } from './settings-writer.js';
