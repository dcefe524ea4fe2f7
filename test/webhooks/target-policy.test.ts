import type { LookupAddress } from 'node:dns';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxOptions } from '../../src/config/options.js';
import type { Resolve } from '../../src/webhooks/target-guard.js';
import { testSandbox, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { Receiver } from './receiver.js';
import { createOrders, deliveries, webhookSandbox, type DeliveryView } from './support.js';

let sandbox: TestSandbox | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await sandbox?.close();
  await receiver?.close();
  sandbox = receiver = undefined;
});

/** A resolver that knows only these names (the DNS a partner would control), as `dns.lookup` with `all` answers. */
const resolver = (names: Record<string, string>): Resolve => (host, _options, callback) => {
  const address = names[host];
  if (address === undefined) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), []);
  callback(null, [{ address, family: address.includes(':') ? 6 : 4 } satisfies LookupAddress]);
};

/** A sandbox with the policy, client A with no configured URL, and a resolver for test names. */
async function policySandbox(webhookTargets: string, names: Record<string, string> = {}, options: SandboxOptions = {}): Promise<TestSandbox> {
  sandbox = await testSandbox({ webhookTargets, ...options }, { webhookLookup: resolver(names) });
  return sandbox;
}

const setUrl = (s: TestSandbox, url: string) => s.call('PUT', '/__sandbox/webhook', { body: { url } });
const ping = async (s: TestSandbox): Promise<DeliveryView> => {
  const res = await s.call('POST', '/__sandbox/webhooks/test');
  expect(res.status).toBe(200);
  return res.body as DeliveryView;
};

function expectRefused(res: { status: number; body: { errors?: Array<{ field: string; message: string }> } }, rule: string, text?: string): void {
  expect(res.status).toBe(400);
  const error = res.body.errors?.find((e) => e.field === 'url');
  expect(error?.message).toContain(`rule ${rule}`);
  if (text) expect(error?.message).toContain(text);
}

describe('PUT /__sandbox/webhook with --webhook-targets public', () => {
  let shared: TestSandbox;
  beforeAll(async () => {
    shared = await testSandbox({ webhookTargets: 'public' });
  });
  afterAll(() => shared.close());

  it.each([
    ['http://127.0.0.1/hooks', 'address', '127.0.0.1 is loopback'],
    ['http://0x7f000001/hooks', 'address', '127.0.0.1 is loopback'],
    ['http://2130706433/hooks', 'address', '127.0.0.1 is loopback'],
    ['http://0177.0.0.1/hooks', 'address', '127.0.0.1 is loopback'],
    ['http://127.1/hooks', 'address', '127.0.0.1 is loopback'],
    ['http://[::1]/hooks', 'address', '::1 is loopback'],
    ['http://[::ffff:127.0.0.1]/hooks', 'address', 'ipv4Mapped'],
    ['http://[::127.0.0.1]/hooks', 'address', 'reserved'],
    ['http://[::7f00:1]/hooks', 'address', 'reserved'],
    ['http://[::]/hooks', 'address', 'unspecified'],
    ['http://0.0.0.0/hooks', 'address', 'unspecified'],
    ['http://169.254.169.254/latest/meta-data/', 'address', 'linkLocal'],
    ['http://[fe80::1]/hooks', 'address', 'linkLocal'],
    ['http://10.0.0.1/hooks', 'address', 'private'],
    ['http://192.168.1.1/hooks', 'address', 'private'],
    ['http://172.16.0.1/hooks', 'address', 'private'],
    ['http://[fd00::1]/hooks', 'address', 'uniqueLocal'],
    ['http://100.64.0.1/hooks', 'address', 'carrierGradeNat'],
    ['http://224.0.0.1/hooks', 'address', 'multicast'],
    ['http://[ff02::1]/hooks', 'address', 'multicast'],
    ['http://255.255.255.255/hooks', 'address', 'broadcast'],
    ['http://[64:ff9b::7f00:1]/hooks', 'address', 'rfc6052'],
    ['http://[2002:7f00:1::]/hooks', 'address', '6to4'],
    ['http://metadata.google.internal/computeMetadata/v1/', 'name', 'metadata.google.internal'],
    ['http://localhost:4010/__sandbox/reset', 'name', 'localhost'],
    ['http://LOCALHOST./hooks', 'name', 'localhost'],
    ['http://user:pass@127.0.0.1/hooks', 'credentials', undefined],
    ['https://user:pass@hooks.partner.example/hooks', 'credentials', undefined],
    ['http://hooks.partner.example:0/hooks', 'port', 'port 0'],
    ['http://hooks.partner.example:65536/hooks', 'port', 'port 65536'],
  ])('returns 400 naming url and the rule for %s', async (url, rule, text) => {
    expectRefused(await setUrl(shared, url), rule, text);
    expect((await shared.call('GET', '/__sandbox/webhook')).body).toMatchObject({ url: null, source: 'none' });
  });

  it('says in the summary that the operator\'s policy refused the URL, and what it admits', async () => {
    const res = await setUrl(shared, 'http://127.0.0.1/hooks');
    expect(res.body).toMatchObject({ message: expect.stringContaining('(--webhook-targets): use a public http(s) URL without credentials, or one the operator allows') });
  });

  it('accepts a public address and a public name', async () => {
    expect((await setUrl(shared, 'https://93.184.215.14/hooks')).status).toBe(200);
    expect((await setUrl(shared, 'https://hooks.partner.example/hooks')).status).toBe(200);
    // A scheme is the same in any case (RFC 3986), as curl and browsers take it.
    expect((await setUrl(shared, 'HTTPS://hooks.partner.example/hooks')).status).toBe(200);
  });
});

describe('webhook attempts with --webhook-targets public', () => {
  it('refuses at connect time a name that resolves to 127.0.0.1: logged as refused, nothing reaches the receiver', async () => {
    receiver = await Receiver.start();
    receiver.respond = () => ({ status: 200, body: 'db_password=hunter2' });
    const s = await policySandbox('public', { 'rebind.partner.example': '127.0.0.1' });
    expect((await setUrl(s, `http://rebind.partner.example:${receiver.port}/hooks`)).status).toBe(200);

    const delivery = await ping(s);
    expect(delivery.status).toBe('failed');
    expect(delivery.attempts[0]).toMatchObject({ status_code: null, response_body: '', duration_ms: 0, error: 'refused by webhook target policy: rebind.partner.example does not resolve to an address the policy admits' });
    expect(JSON.stringify(delivery)).not.toContain('127.0.0.1'); // where internal names point is not shown
    expect(receiver.received).toHaveLength(0);
  });

  it('says the same of a name that does not resolve as of one that resolves inside: which internal names exist does not show', async () => {
    receiver = await Receiver.start();
    const s = await policySandbox('public', { 'db.internal.example': '10.0.0.5' });
    const errors: string[] = [];
    for (const host of ['db.internal.example', 'nosuch.internal.example']) {
      expect((await setUrl(s, `http://${host}:${receiver.port}/hooks`)).status).toBe(200);
      errors.push((await ping(s)).attempts[0]!.error!.replace(host, '<host>'));
    }
    expect(errors[0]).toBe('refused by webhook target policy: <host> does not resolve to an address the policy admits');
    expect(errors[1]).toBe(errors[0]);
    expect(receiver.received).toHaveLength(0);
  });

  it('counts a refused scheduled attempt as failed: the delivery stays pending for its retry', async () => {
    receiver = await Receiver.start();
    const s = await policySandbox('public', { 'rebind.partner.example': '10.1.2.3' });
    await setUrl(s, `http://rebind.partner.example:${receiver.port}/hooks`);
    await createOrders(s, 1);
    await s.advance(60_000);
    const [delivery] = await deliveries(s);
    expect(delivery).toMatchObject({ status: 'pending', last_error: 'refused by webhook target policy: rebind.partner.example does not resolve to an address the policy admits' });
    expect(delivery!.attempts).toHaveLength(1);
    expect(receiver.received).toHaveLength(0);
  });

  it('trusts a URL the operator configured (config file), loopback included', async () => {
    receiver = await Receiver.start();
    sandbox = await webhookSandbox(receiver.url, { webhookTargets: 'public' });
    await createOrders(sandbox, 1);
    await sandbox.advance(60_000);
    expect(receiver.received).toHaveLength(1);
    expect((await deliveries(sandbox))[0]).toMatchObject({ status: 'delivered' });
  });
});

describe('--webhook-targets as an allow list', () => {
  it('admits a listed host whatever it resolves to, and refuses another name at connect time', async () => {
    receiver = await Receiver.start();
    const s = await policySandbox('hooks.partner.test,10.20.0.0/16', { 'hooks.partner.test': '127.0.0.1', 'other.partner.test': '127.0.0.1' });
    expect((await setUrl(s, `http://hooks.partner.test:${receiver.port}/hooks`)).status).toBe(200);
    expect(await ping(s)).toMatchObject({ status: 'delivered' });
    expect(receiver.received).toHaveLength(1);

    expect((await setUrl(s, `http://other.partner.test:${receiver.port}/hooks`)).status).toBe(200);
    expect((await ping(s)).attempts[0]!.error).toBe('refused by webhook target policy: other.partner.test does not resolve to an address the policy admits');
    expect(receiver.received).toHaveLength(1);
  });

  it('admits addresses inside a listed CIDR and refuses those outside, public ones included', async () => {
    const s = await policySandbox('hooks.partner.test,10.20.0.0/16');
    expect((await setUrl(s, 'http://10.20.3.4/hooks')).status).toBe(200);
    expect((await setUrl(s, 'http://10.20.255.255/hooks')).status).toBe(200);
    expectRefused(await setUrl(s, 'http://10.21.0.1/hooks'), 'not_listed', '10.21.0.1 is not in the allow list');
    expectRefused(await setUrl(s, 'http://8.8.8.8/hooks'), 'not_listed');
    expectRefused(await setUrl(s, 'http://127.0.0.1/hooks'), 'not_listed');
  });

  it('with hosts only, refuses any other name when it is set', async () => {
    const s = await policySandbox('hooks.partner.test');
    expect((await setUrl(s, 'https://HOOKS.partner.test./x')).status).toBe(200);
    expectRefused(await setUrl(s, 'https://evil.partner.test/x'), 'not_listed', 'evil.partner.test is not in the allow list');
  });

  it('combined with public: public addresses and the listed private one, nothing else', async () => {
    const s = await policySandbox('public,10.1.2.3');
    expect((await setUrl(s, 'http://10.1.2.3/hooks')).status).toBe(200);
    expect((await setUrl(s, 'http://8.8.8.8/hooks')).status).toBe(200);
    expectRefused(await setUrl(s, 'http://10.1.2.4/hooks'), 'address', '10.1.2.4 is private');
  });
});

describe('--webhook-targets any (the default)', () => {
  it('admits localhost, set and sent', async () => {
    receiver = await Receiver.start();
    sandbox = await testSandbox();
    expect((await setUrl(sandbox, `http://localhost:${receiver.port}/hooks`)).status).toBe(200);
    expect(await ping(sandbox)).toMatchObject({ status: 'delivered' });
    expect(receiver.received).toHaveLength(1);
  });

  it('still refuses URLs with credentials', async () => {
    sandbox = await testSandbox();
    expectRefused(await setUrl(sandbox, 'http://user:pass@127.0.0.1/hooks'), 'credentials');
    expectRefused(await setUrl(sandbox, 'http://127.0.0.1:0/hooks'), 'port');
  });

  it('refuses a URL whose host a parser would guess (none after the slashes, or percent-encoded), on both the default and a named endpoint', async () => {
    sandbox = await testSandbox();
    expectRefused(await setUrl(sandbox, 'http:///127.0.0.1:9/hooks'), 'scheme', 'has no host after its //');
    expectRefused(await sandbox.call('POST', '/__sandbox/webhooks/endpoints', { body: { url: 'http://%41.test/hooks' } }), 'scheme', 'has a percent-encoded host');
    expectRefused(await setUrl(sandbox, 'https://hooks%2etest/x'), 'scheme', 'has a percent-encoded host');
    // A percent-encoded path, query or user part is not the host's.
    expect((await setUrl(sandbox, 'http://127.0.0.1:9/hooks%20a?x=%41#%42')).status).toBe(200);
  });

  it('says that a URL no policy admits (port 0, credentials) is refused under any policy, not by the operator\'s, on both the default and a named endpoint', async () => {
    sandbox = await testSandbox();
    for (const res of [
      await setUrl(sandbox, 'http://127.0.0.1:0/hooks'),
      await sandbox.call('POST', '/__sandbox/webhooks/endpoints', { body: { url: 'http://user:pass@127.0.0.1/hooks' } }),
    ]) {
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ message: expect.stringContaining('under any webhook target policy') });
      expect(res.body.message).not.toContain('one the operator allows');
    }
    expect((await setUrl(sandbox, 'http://127.0.0.1:99999/hooks')).body.message).toContain('on a port from 1 to 65535');
  });

  it.each([
    ['a trailing space', 'http://127.0.0.1:3000/hooks ', 'must be an absolute URL with no spaces in it'],
    ['a character a URL escapes', 'http://127.0.0.1:3000/<script>', 'what a URL escapes percent-encoded (< > " { } | \\ ^ ` and letters beyond ASCII: %3C for <; a % only before two hex digits'],
    ['a host of other than ASCII letters', 'http://ünïcode.test/x', 'in its punycode form, xn--'],
    ['a second #', 'http://127.0.0.1:3000/hooks#a#b', 'a # only once: what follows it is one fragment, its own # as %23'],
    ['a leading space', ' http://127.0.0.1:3000/hooks', 'must start with http:// or https:// (nothing before it, a space included)'],
  ])('says what is wrong with a URL of %s, in words rather than the schema', async (_what, url, message) => {
    sandbox = await testSandbox();
    const res = await setUrl(sandbox, url);
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual({ field: 'url', message: expect.stringContaining(message) });
  });
});

describe('response bodies in the delivery log', () => {
  it('keeps at most 1 KiB of a body, and a reset removes the delivery with it', async () => {
    receiver = await Receiver.start();
    receiver.respond = () => ({ status: 500, body: `db_password=hunter2 ${'x'.repeat(10_000)}` });
    sandbox = await testSandbox();
    await setUrl(sandbox, receiver.url);
    const delivery = await ping(sandbox);
    expect(delivery.attempts[0]!.response_body.startsWith('db_password=hunter2')).toBe(true);
    expect(Buffer.byteLength(delivery.attempts[0]!.response_body)).toBe(1024);

    expect((await sandbox.call('POST', '/__sandbox/reset')).status).toBe(200);
    expect((await sandbox.call('GET', `/__sandbox/webhooks/deliveries/${delivery.id}`)).status).toBe(404);
    expect(await deliveries(sandbox)).toEqual([]);
    expect(await deliveries(sandbox, '', TOKEN_B)).toEqual([]);
  });
});

describe('createSandbox options', () => {
  it.each(['any,public', 'public,not a host', '10.0.0.0/33', ''])('refuses webhookTargets %j, naming the option', async (webhookTargets) => {
    await expect(testSandbox({ webhookTargets })).rejects.toThrow(/webhookTargets/);
  });
});
