import type { Logger } from 'pino';
import { EmbeddedStorage, writeWarnings } from './embedded/index.js';
import { PostgresStorage } from './postgres/index.js';
import type { Storage } from './port.js';
import type { StoreFileSystem } from './embedded/index.js';

/** What picks and opens the storage: `--data`, `--fsync`, `--journal-size`, `--database-url`. */
export interface StorageOptions {
  data: string;
  fsync: boolean;
  journalSize: number;
  databaseUrl: string | undefined;
}

/**
 * Opens the storage the options name: PostgreSQL with `--database-url`, else the
 * embedded store on `--data` (a file, or `:memory:`).
 */
export function openStorage(options: StorageOptions, logger: Logger, fileSystem?: StoreFileSystem): Promise<Storage> {
  if (options.databaseUrl !== undefined) {
    return PostgresStorage.open({
      url: options.databaseUrl,
      requestLogSize: options.journalSize,
      onError: (error) => logger.error({ err: error }, 'database connection failed'),
    });
  }
  return EmbeddedStorage.open({
    path: options.data,
    fsync: options.fsync,
    requestLogSize: options.journalSize,
    ...(fileSystem ? { fileSystem } : {}),
    onError: (error) => logger.error({ err: error }, 'store write failed'),
    ...writeWarnings(logger),
  });
}
