import { DataFileError } from './types.js';

/** A field given twice (a collection pasted in by hand): reading on would keep only the last, and the next checkpoint would erase the first. */
export const twice = (path: string, name: string) =>
  new DataFileError(
    `The data file ${path} has ${JSON.stringify(name)} twice. It was left as it was: merge the two into one by hand, or move the file away to start without it.`,
  );
