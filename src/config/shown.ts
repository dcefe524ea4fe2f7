import { formatDuration } from '../shared/index.js';

/** A resolved option as people write it, for logs: durations back to text. */
export const shownRetention = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : formatDuration(ms));

/** Query parameters of a database URL that carry a secret (node-postgres reads them as connection settings). */
const SECRET_PARAMETERS = ['password', 'sslpassword', 'sslkey', 'sslcert', 'sslrootcert'];

/** A database URL as the banner and the logs show it: without its password, whether in the user part or a parameter. */
export function shownDatabase(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '****';
    for (const name of [...parsed.searchParams.keys()]) {
      if (SECRET_PARAMETERS.includes(name.toLowerCase())) parsed.searchParams.set(name, '****');
    }
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}
