import type { Logger } from 'pino';
import { EmbeddedStorage, writeWarnings } from './embedded/index.js';
import { PostgresStorage } from './postgres/index.js';
import type { Storage } from './port.js';
import type { StoreFileSystem } from './embedded/index.js';

/** What picks and opens the storage: `--data`, `--fsync`, `--salvage-journal`, `--journal-size`, `--database-url`. */
export interface StorageOptions {
  data: string;
  fsync: boolean;
  salvageJournal?: boolean;
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
    salvageJournal: options.salvageJournal === true,
    onSalvage: (salvage) =>
      logger.warn(
        { folder: salvage.folder, damage: salvage.damage, moved: salvage.moved, from_line: salvage.fromLine },
        `the journal was damaged (${salvage.damage}): started from what was intact; set aside ${salvage.moved.join(', ') || 'nothing'} into ${salvage.folder}` +
          (salvage.fromLine > 0 ? `, their commits from line ${salvage.fromLine} of the first on lost` : ', their commits lost'),
      ),
    requestLogSize: options.journalSize,
    ...(fileSystem ? { fileSystem } : {}),
    onError: (error) => logger.error({ err: error }, 'store write failed'),
    ...writeWarnings(logger),
  });
}
