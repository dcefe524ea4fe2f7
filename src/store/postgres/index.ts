export { PostgresStorage } from './storage.js';
