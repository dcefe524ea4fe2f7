/** The PostgreSQL adapter: one file per repository, units of work as transactions, jobs claimed with SKIP LOCKED. */

export { PostgresStorage } from './storage.js';
