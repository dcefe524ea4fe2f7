import { formatDuration } from '../shared/index.js';

/** A resolved option as people write it, for logs: durations back to text. */
export const shownRetention = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : formatDuration(ms));

/** A database URL as the banner and the logs show it: without its password. */
export function shownDatabase(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '****';
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}
