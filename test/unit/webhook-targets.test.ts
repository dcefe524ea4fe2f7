import { describe, expect, it } from 'vitest';
import { checkAddress, checkUrl, literalHost, parseTargetPolicy, rangeOf } from '../../src/webhooks/targets.js';
import { checkingLookup, TargetRefused } from '../../src/webhooks/target-guard.js';

const publicPolicy = parseTargetPolicy('public');

describe('rangeOf', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['fc00::1', 'uniqueLocal'],
    ['::ffff:7f00:1', 'ipv4Mapped'],
    ['2001::1', 'teredo'],
    ['8.8.8.8', 'unicast'],
    ['2606:4700::1111', 'unicast'],
  ])('%s is %s', (address, range) => {
    expect(rangeOf(address)).toBe(range);
  });
});

describe('parseTargetPolicy', () => {
  it('reads any, public and lists of hosts, addresses and CIDRs', () => {
    expect(parseTargetPolicy('any')).toEqual({ kind: 'any' });
    const list = parseTargetPolicy(' public , Hooks.Partner.Test. ,10.20.0.0/16, 10.1.2.3, fd00::/8');
    expect(list).toMatchObject({ kind: 'list', public: true, text: 'public,Hooks.Partner.Test.,10.20.0.0/16,10.1.2.3,fd00::/8' });
    expect(list.kind === 'list' && [...list.hosts]).toEqual(['hooks.partner.test']);
    expect(list.kind === 'list' && list.cidrs.map(([net, bits]) => `${net.toString()}/${bits}`)).toEqual(['10.20.0.0/16', '10.1.2.3/32', 'fd00::/8']);
  });

  it.each([
    ['', /any, public/],
    ['any,public', /cannot be combined/],
    ['10.0.0.0/33', /not a CIDR/],
    ['http://hooks.test', /not a CIDR/],
    ['under_score.test', /neither public/],
  ])('refuses %j', (text, message) => {
    expect(() => parseTargetPolicy(text)).toThrow(message);
  });
});

describe('checkAddress', () => {
  it('admits everything under any', () => {
    expect(checkAddress(parseTargetPolicy('any'), '127.0.0.1')).toBeUndefined();
  });

  it('admits only unicast addresses under public, naming the range of others', () => {
    expect(checkAddress(publicPolicy, '93.184.215.14')).toBeUndefined();
    expect(checkAddress(publicPolicy, '127.0.0.1')).toEqual({ rule: 'address', message: '127.0.0.1 is loopback' });
    expect(checkAddress(publicPolicy, '::ffff:10.0.0.1')?.message).toBe('::ffff:10.0.0.1 is ipv4Mapped');
  });

  it('admits a listed host whatever its address, and CIDR members in either family', () => {
    const policy = parseTargetPolicy('hooks.partner.test,10.20.0.0/16');
    expect(checkAddress(policy, '127.0.0.1', 'HOOKS.partner.test.')).toBeUndefined();
    expect(checkAddress(policy, '10.20.9.9', 'other.test')).toBeUndefined();
    expect(checkAddress(policy, '::ffff:10.20.9.9', 'other.test')).toBeUndefined();
    expect(checkAddress(policy, '10.21.0.1', 'other.test')).toEqual({ rule: 'not_listed', message: '10.21.0.1 is not in the allow list (hooks.partner.test,10.20.0.0/16)' });
    expect(checkAddress(policy, '8.8.8.8')?.rule).toBe('not_listed');
  });
});

describe('checkUrl', () => {
  it.each([
    ['any', 'http://user:pass@hooks.test/x', 'credentials'],
    ['any', 'http://user@hooks.test/x', 'credentials'],
    ['any', 'file:///etc/passwd', 'scheme'],
    ['any', 'not a url', 'scheme'],
    ['public', 'http://0x7f000001/x', 'address'],
    ['public', 'http://[::ffff:127.0.0.1]/x', 'address'],
    ['public', 'http://metadata.google.internal/x', 'name'],
    ['public', 'http://printer.local/x', 'name'],
    ['public', 'http://app.localhost/x', 'name'],
    ['hooks.partner.test', 'http://evil.test/x', 'not_listed'],
  ])('under %s refuses %s (%s)', (policy, url, rule) => {
    expect(checkUrl(parseTargetPolicy(policy), url)?.rule).toBe(rule);
  });

  it.each([
    ['any', 'http://localhost:3000/hooks'],
    ['public', 'https://hooks.partner.example/x'],
    ['public,10.0.0.0/8', 'http://10.1.2.3/x'],
    ['hooks.partner.test', 'https://hooks.partner.test:8443/x'],
    ['10.0.0.0/8', 'https://name-checked-on-connect.test/x'],
  ])('under %s admits %s', (policy, url) => {
    expect(checkUrl(parseTargetPolicy(policy), url)).toBeUndefined();
  });
});

describe('literalHost', () => {
  it('gives the address of an IP-literal URL in its canonical spelling, nothing for a name', () => {
    expect(literalHost('http://2130706433/x')).toBe('127.0.0.1');
    expect(literalHost('http://[::1]:8080/x')).toBe('::1');
    expect(literalHost('http://hooks.test/x')).toBeUndefined();
  });
});

describe('checkingLookup', () => {
  const lookupWith = (addresses: string[]) =>
    checkingLookup(publicPolicy, (_host, _options, callback) => callback(null, addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))));
  const run = (lookup: ReturnType<typeof lookupWith>, all: boolean) =>
    new Promise<{ error: unknown; result: unknown }>((resolve) => lookup('hooks.test', { all }, (error, result) => resolve({ error, result })));

  it('refuses when any resolved address is refused (one private among public ones)', async () => {
    const { error } = await run(lookupWith(['93.184.215.14', '10.0.0.1']), true);
    expect(error).toBeInstanceOf(TargetRefused);
    expect((error as Error).message).toBe('refused by webhook target policy: hooks.test does not resolve to an address the policy admits');
    expect((error as TargetRefused).refusal.rule).toBe('address');
  });

  it('answers as dns.lookup would when every address is admitted', async () => {
    expect((await run(lookupWith(['93.184.215.14', '2606:4700::1111']), true)).result).toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:4700::1111', family: 6 },
    ]);
    expect((await run(lookupWith(['93.184.215.14']), false)).result).toBe('93.184.215.14');
  });
});
