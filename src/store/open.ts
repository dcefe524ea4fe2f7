import type { Logger } from 'pino';
import type { ResolvedOptions } from '../config/options.js';
import { EmbeddedStorage } from './embedded/storage.js';
import type { Storage } from './port.js';
import type { StoreFileSystem } from './types.js';

/** Opens the storage the options name: the embedded store on `--data` (a file, or `:memory:`). */
export function openStorage(options: Pick<ResolvedOptions, 'data' | 'fsync' | 'journalSize'>, logger: Logger, fileSystem?: StoreFileSystem): Promise<Storage> {
  return EmbeddedStorage.open({
    path: options.data,
    fsync: options.fsync,
    requestLogSize: options.journalSize,
    ...(fileSystem ? { fileSystem } : {}),
    onError: (error) => logger.error({ err: error }, 'store write failed'),
  });
}
