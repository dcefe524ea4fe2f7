import ipaddr from 'ipaddr.js';

/**
 * Where webhooks set through the API may go (`--webhook-targets`): `any` address, or
 * the addresses a list admits: `public` (every unicast address ipaddr.js knows as
 * such), host names, single addresses and CIDRs, comma-separated.
 *
 * @example parseTargetPolicy('public,hooks.partner.test,10.20.0.0/16')
 */
export type TargetPolicy =
  | { kind: 'any' }
  | { kind: 'list'; text: string; public: boolean; hosts: ReadonlySet<string>; cidrs: ReadonlyArray<[ipaddr.IPv4 | ipaddr.IPv6, number]> };

/** Why a URL or an address is refused: the rule, and a sentence naming what broke it. */
export interface Refusal {
  rule: 'credentials' | 'scheme' | 'port' | 'address' | 'name' | 'not_listed';
  message: string;
}

/**
 * Names that never lead to a public receiver: loopback and private-use names
 * (RFC 6761 `localhost`, RFC 6762 `.local`, RFC 8375 `.home.arpa`, ICANN's `.internal`,
 * which is where cloud metadata services live: `metadata.google.internal`).
 */
const SPECIAL_NAMES = /(^|\.)(localhost|local|internal|home\.arpa|localdomain)$/;

/** A host as the allow list and the checks compare it: lower case, no trailing dot, no IPv6 brackets. */
const normalHost = (host: string): string => host.toLowerCase().replace(/\.$/, '').replace(/^\[(.*)\]$/, '$1');

/** Reads the policy text; throws a message saying what is wrong with it. */
export function parseTargetPolicy(text: string): TargetPolicy {
  const entries = text.split(',').map((e) => e.trim()).filter(Boolean);
  if (entries.length === 0) throw new Error('webhookTargets must be any, public, or a comma-separated list of hosts and CIDRs.');
  if (entries.length === 1 && entries[0] === 'any') return { kind: 'any' };
  if (entries.includes('any')) throw new Error('webhookTargets: "any" admits every address and cannot be combined with a list.');
  const hosts = new Set<string>();
  const cidrs: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = [];
  let isPublic = false;
  for (const entry of entries) {
    if (entry === 'public') isPublic = true;
    else if (entry.includes('/')) {
      try {
        cidrs.push(ipaddr.parseCIDR(entry));
      } catch {
        throw new Error(`webhookTargets: "${entry}" is not a CIDR such as 10.20.0.0/16 or fd00::/8.`);
      }
    } else if (ipaddr.isValid(normalHost(entry))) {
      const address = ipaddr.parse(normalHost(entry));
      cidrs.push([address, address.kind() === 'ipv4' ? 32 : 128]);
    } else if (/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i.test(entry)) hosts.add(normalHost(entry));
    else throw new Error(`webhookTargets: "${entry}" is neither public, a host name, an address nor a CIDR.`);
  }
  return { kind: 'list', text: entries.join(','), public: isPublic, hosts, cidrs };
}

/** The range ipaddr.js puts an address in: `unicast` for a public one, else `loopback`, `private`, `linkLocal`, ... */
export function rangeOf(address: string): string {
  return ipaddr.parse(normalHost(address)).range();
}

const inCidrs = (policy: Extract<TargetPolicy, { kind: 'list' }>, address: ipaddr.IPv4 | ipaddr.IPv6): boolean =>
  policy.cidrs.some(([net, bits]) => {
    if (address.kind() === net.kind()) return address.match(net, bits);
    // ::ffff:10.20.1.1 is 10.20.1.1 for an IPv4 CIDR (the same socket address).
    return address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() && net.kind() === 'ipv4' && address.toIPv4Address().match(net, bits);
  });

/**
 * Whether the policy admits a connection to `address` (an IP, as resolved) made for
 * `host` (the URL's host name): undefined when it does, else why not.
 *
 * @example checkAddress(parseTargetPolicy('public'), '127.0.0.1', 'rebind.test') // { rule: 'address', message: '127.0.0.1 is loopback' }
 */
export function checkAddress(policy: TargetPolicy, address: string, host?: string): Refusal | undefined {
  if (policy.kind === 'any') return undefined;
  if (host !== undefined && policy.hosts.has(normalHost(host))) return undefined;
  const parsed = ipaddr.parse(normalHost(address));
  if (inCidrs(policy, parsed)) return undefined;
  // ipaddr.js calls ::/8 (IPv4-compatible ::a.b.c.d, deprecated, and other reserved forms) unicast: not public.
  const range = parsed instanceof ipaddr.IPv6 && parsed.parts[0]! < 0x100 && parsed.range() === 'unicast' ? 'reserved' : parsed.range();
  if (policy.public && range === 'unicast') return undefined;
  const shown = normalHost(address);
  if (!policy.public) return { rule: 'not_listed', message: `${shown} is not in the allow list (${policy.text})` };
  return { rule: 'address', message: `${shown} is ${range}` };
}

/**
 * The check of a URL a client sets through the API: credentials, other schemes and port 0
 * are refused under every policy; then an address literal (in any spelling the URL parser
 * reads: 0x7f000001, 2130706433, 0177.0.0.1, 127.1, [::ffff:127.0.0.1]) is checked as an
 * address, and a name must be listed, or (with `public` or CIDRs) not a special-use name;
 * where it resolves to is checked at connect time. Undefined when the URL is admitted.
 */
export function checkUrl(policy: TargetPolicy, url: string): Refusal | undefined {
  return hostGuessed(url) ?? checkParsedUrl(policy, url);
}

/**
 * A URL whose host the parser forgives what the URL shown and stored would not say:
 * `http:///host/x` (no host after the slashes: it takes the path's first part) and
 * `http://%41.test` (a host percent-encoded: it decodes it). Refused when set through the
 * API, since the URL shown must say where deliveries go; the operator's are taken as written.
 */
function hostGuessed(url: string): Refusal | undefined {
  const authority = /^https?:\/\/([^/?#]*)/i.exec(url)?.[1];
  if (authority === '') return { rule: 'scheme', message: 'has no host after its // (http:///host reads as http://host to a URL parser): write http://host/path' };
  if (authority !== undefined && /%/.test(authority.slice(authority.lastIndexOf('@') + 1))) {
    return { rule: 'scheme', message: 'has a percent-encoded host (%41.test reads as a.test): write the host as it is, a name beyond ASCII in its punycode form, xn--…' };
  }
  return undefined;
}

/** `checkUrl`'s checks of the URL as the parser reads it, which the operator's URLs are held to as well. */
function checkParsedUrl(policy: TargetPolicy, url: string): Refusal | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // The parser refuses a port past 65535 as any unparsable URL: named for what it is.
    const port = /^https?:\/\/[^/?#]*:(\d+)(?:[/?#]|$)/i.exec(url)?.[1];
    if (port !== undefined && Number(port) > 65_535) return { rule: 'port', message: `is port ${port}, past the last port (65535)` };
    return { rule: 'scheme', message: 'is not an absolute http(s) URL' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { rule: 'scheme', message: `uses ${parsed.protocol.replace(/:$/, '')}: only http and https are sent to` };
  if (parsed.username !== '' || parsed.password !== '') {
    return { rule: 'credentials', message: 'carries credentials (user:password@): they would be sent to the receiver and shown in the delivery log; check the webhook signature instead' };
  }
  // Port 0 names no port: nothing can ever be delivered there.
  if (parsed.port === '0') return { rule: 'port', message: 'is port 0, which no receiver listens on' };
  if (policy.kind === 'any') return undefined;
  const host = normalHost(parsed.hostname);
  if (ipaddr.isValid(host)) return checkAddress(policy, host);
  if (policy.hosts.has(host)) return undefined;
  if (!policy.public && policy.cidrs.length === 0) return { rule: 'not_listed', message: `${host} is not in the allow list (${policy.text})` };
  if (SPECIAL_NAMES.test(host)) return { rule: 'name', message: `${host} is a loopback or internal name` };
  return undefined;
}

/**
 * The check of a URL the operator configures (`--webhook-url`, a client's `webhook.url`):
 * trusted wherever it points, but it must be an http(s) URL without credentials, as one
 * set through the API must. Undefined when it is one.
 */
export function checkConfiguredUrl(url: string): Refusal | undefined {
  const refusal = checkParsedUrl({ kind: 'any' }, url);
  // Not the scheme it read: in `alice:hunter2@hooks.test`, with the scheme forgotten, that is a user name.
  return refusal?.rule === 'scheme' ? { rule: 'scheme', message: 'is not an absolute http(s) URL' } : refusal;
}

/** Whether a URL's host is an address literal (then no lookup happens on connect: check it as it is). */
export function literalHost(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const host = normalHost(new URL(url).hostname);
  return ipaddr.isValid(host) ? host : undefined;
}
