import { InvalidArgumentError } from 'commander';

/** An option's parser of an absolute http(s) URL; its message shows `example` (the sandbox's URL, or a receiver's). */
export const httpUrl =
  (example: string) =>
  (value: string): string => {
    const absolute = `must be an absolute http:// or https:// URL, e.g. ${example}`;
    // Without a scheme, `localhost:4010` would parse with `localhost:` as its scheme.
    const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value)?.[1]?.toLowerCase();
    if (scheme === undefined) throw new InvalidArgumentError(absolute);
    // Named before the rest is parsed: `ftp://h:99999` is first of all not an http URL.
    if (scheme !== 'http' && scheme !== 'https') throw new InvalidArgumentError(`must be an http:// or https:// URL, not ${scheme}:`);
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      // A port past 65535 fails the parse as any malformed URL would: named for what it is.
      const port = /^[a-z][a-z0-9+.-]*:\/\/(?:[^/?#@]*@)?(?:\[[^\]]*\]|[^/?#:]*):(\d+)(?:[/?#]|$)/i.exec(value)?.[1];
      if (port !== undefined && Number(port) > 65535) throw new InvalidArgumentError(`has port ${port}: a port is 0 to 65535`);
      throw new InvalidArgumentError(absolute);
    }
    // fetch refuses them on every forward, and the URL would be printed and kept in the delivery log with them.
    if (url.username !== '' || url.password !== '') throw new InvalidArgumentError('must not hold a user or password (user:password@): the URL is printed and its errors kept in the delivery log');
    return value;
  };

/**
 * `path` (from the sandbox's root, e.g. `/__sandbox/report?format=json`) under `base`,
 * keeping the path `base` has: a sandbox behind a gateway at `https://gw.example/sandbox`
 * is reached at `https://gw.example/sandbox/__sandbox/report`, where `new URL(path, base)`
 * would drop `/sandbox` and call the gateway's root.
 */
export function sandboxUrl(base: string | URL, path: string): URL {
  const url = new URL(base);
  const [pathname, query] = path.split('?', 2) as [string, string | undefined];
  // Set on the base's own URL, never resolved against it: a path of `//host/...` (a doubled slash in --url) would name another host.
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${pathname}`;
  url.search = query === undefined ? '' : `?${query}`;
  url.hash = '';
  return url;
}

/**
 * What a 404 adds when --url ends in `/v1`, the provider API's prefix rather than the
 * sandbox's base URL (the commands call `/__sandbox/…` under it): the URL to give instead;
 * '' for any other answer or URL.
 *
 * @example apiPrefixHint('http://127.0.0.1:4010/v1', 404) // " (--url is the sandbox's base URL, without /v1: use --url http://127.0.0.1:4010)"
 */
export function apiPrefixHint(base: string, status: number): string {
  const url = new URL(base);
  if (status !== 404 || !/\/v1\/?$/.test(url.pathname)) return '';
  url.pathname = url.pathname.replace(/\/v1\/?$/, '');
  url.search = '';
  url.hash = '';
  return ` (--url is the sandbox's base URL, without /v1: use --url ${url.toString().replace(/\/$/, '')})`;
}
