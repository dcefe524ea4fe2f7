/** The journaled data file under the embedded adapter: snapshot, journal segments, lock, schema and migrations. */

export { realDataPath } from './data-path.js';
export { JournaledFile } from './journaled-file.js';
export { LOCK_LOST } from './lock-lost.js';
export type { JournaledFileOptions } from './journaled-file-options.js';
export { DataFileError, StoreUnavailable } from './types.js';
export type { RecordFormat, RecordFormats, StoreFileSystem } from './types.js';
export { writeWarnings } from './write-warnings.js';
export { copyOf, copyWith, Shapes } from './record-copy.js';
