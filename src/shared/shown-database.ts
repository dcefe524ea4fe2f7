/** Query parameters of a database URL that carry a secret (node-postgres reads them as connection settings). */
const SECRET_PARAMETERS = ['password', 'sslpassword', 'sslkey', 'sslcert', 'sslrootcert'];

/** Stands for the missing host of a socket URL while it is parsed (`.invalid` is never a real host). */
const STAND_IN_HOST = 'no-host.invalid';

/** A database URL as the banner and the logs show it: without its password, whether in the user part or a parameter. */
export function shownDatabase(url: string): string {
  // node-postgres takes a URL with no host (`postgres://u:p@/db?host=/var/run/postgresql`, a Unix socket) that WHATWG's parser refuses: parsed with a stand-in host, shown without it.
  const hostless = /^postgres(ql)?:\/\/[^/@]*@\//i.test(url);
  try {
    const parsed = new URL(hostless ? url.replace('@/', `@${STAND_IN_HOST}/`) : url);
    if (parsed.password) parsed.password = '****';
    for (const name of [...parsed.searchParams.keys()]) {
      if (SECRET_PARAMETERS.includes(name.toLowerCase())) parsed.searchParams.set(name, '****');
    }
    const shown = parsed.toString();
    return hostless ? shown.replace(`@${STAND_IN_HOST}/`, '@/') : shown;
  } catch {
    return 'postgres://(unparsable URL)';
  }
}
