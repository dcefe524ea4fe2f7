import { formatDuration } from '../shared/index.js';

export { shownDatabase } from '../shared/index.js';

/** A resolved option as people write it, for logs: durations back to text. */
export const shownRetention = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : formatDuration(ms));
