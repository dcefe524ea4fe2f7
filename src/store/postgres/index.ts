/** The PostgreSQL adapter: one file per repository, units of work as transactions, jobs claimed with SKIP LOCKED. */

export { PostgresStorage } from './storage.js';
export { isUnavailable as cannotReachDatabase, codeOf as databaseErrorCode } from './reachability.js';
export type { PostgresOptions } from './options.js';
