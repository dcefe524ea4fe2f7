import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { readableFailure } from '../../src/shared/index.js';
import { runDeliveries, runListen, runReport, runTrigger } from '../../src/client/index.js';

type Run = (err: (t: string) => void) => Promise<number>;
const none = () => {};
const LISTENING = ['--token', 't', '--forward-to', 'http://localhost:3000/hooks'];

/** Each flag that takes a URL, given a host and port with no scheme, and the example its message shows. */
const CASES: Array<[string, string, Run]> = [
  ['report --url', 'http://127.0.0.1:4010', (err) => runReport(['--url', 'localhost:4010', '--token', 't'], none, err)],
  ['trigger --url', 'http://127.0.0.1:4010', (err) => runTrigger(['awb.generated', '--url', 'localhost:4010', '--token', 't'], none, err)],
  ['deliveries list --url', 'http://127.0.0.1:4010', (err) => runDeliveries(['list', '--url', 'localhost:4010', '--token', 't'], none, err)],
  ['deliveries recover --url', 'http://127.0.0.1:4010', (err) => runDeliveries(['recover', '--url', 'localhost:4010', '--token', 't', '--since', '2026-01-01T00:00:00Z'], none, err)],
  ['listen --url', 'https://sandbox.example', (err) => runListen(['--url', 'localhost:4010', ...LISTENING], none, err, {}, new AbortController().signal)],
  ['listen --forward-to', 'http://localhost:3000/hooks', (err) => runListen(['--url', 'http://127.0.0.1:4010', '--token', 't', '--forward-to', 'localhost:3002/hooks'], none, err, {}, new AbortController().signal)],
];

describe('a client command given a URL with no scheme (localhost:4010)', () => {
  it.each(CASES)('%s exits 2 asking for an absolute http:// or https:// URL, with an example', async (_flag, example, run) => {
    let stderr = '';
    expect(await run((t) => void (stderr += t))).toBe(2);
    expect(stderr).toContain(`must be an absolute http:// or https:// URL, e.g. ${example}`);
  });
});

describe('a URL whose query holds another URL', () => {
  it('is still one without a scheme when it starts with a host (localhost:4010/?next=http://x)', async () => {
    let stderr = '';
    expect(await runReport(['--url', 'localhost:4010/?next=http://x', '--token', 't'], none, (t) => void (stderr += t))).toBe(2);
    expect(stderr).toContain('must be an absolute http:// or https:// URL, e.g. http://127.0.0.1:4010');
  });
});

describe('a URL whose port is past 65535', () => {
  it.each([
    ['report --url', (err: (t: string) => void) => runReport(['--url', 'http://127.0.0.1:99999', '--token', 't'], none, err)],
    ['listen --forward-to', (err: (t: string) => void) => runListen(['--url', 'http://127.0.0.1:4010', '--token', 't', '--forward-to', 'http://[::1]:70000/hooks'], none, err, {}, new AbortController().signal)],
  ])('%s exits 2 naming the port', async (_flag, run) => {
    let stderr = '';
    expect(await run((t) => void (stderr += t))).toBe(2);
    expect(stderr).toMatch(/has port (99999|70000): a port is 0 to 65535/);
    expect(stderr).not.toContain('must be an absolute');
  });
});

describe('a URL of another scheme', () => {
  it.each([
    ['ftp://127.0.0.1:99999', 'ftp:'],
    ['WS://127.0.0.1:4010', 'ws:'],
    ['file:///tmp/x', 'file:'],
  ])('%s exits 2 naming its scheme, whatever else is wrong with it', async (url, scheme) => {
    let stderr = '';
    expect(await runReport(['--url', url, '--token', 't'], none, (t) => void (stderr += t))).toBe(2);
    expect(stderr).toContain(`must be an http:// or https:// URL, not ${scheme}`);
    expect(stderr).not.toContain('a port is');
  });
});

describe('deliveries given a flag where its subcommand goes', () => {
  it('exits 2 saying a subcommand comes first, with both of them', async () => {
    let stderr = '';
    expect(await runDeliveries(['--url', 'http://127.0.0.1:4010', '--token', 't'], none, (t) => void (stderr += t))).toBe(2);
    expect(stderr).toMatch(/^shipping-sandbox deliveries: a subcommand comes first, before '--url'; the ones there are:\n {2}shipping-sandbox deliveries list .*\n {2}shipping-sandbox deliveries recover /);
  });
});

describe('an https:// URL to a sandbox that serves plain http', () => {
  it('is one line naming the likely cause, not OpenSSL\'s text', async () => {
    const plain = createServer((_req, res) => res.end('{}'));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => void plain.close());
    const url = `https://127.0.0.1:${(plain.address() as AddressInfo).port}`;
    let stderr = '';
    expect(await runTrigger(['awb.generated', '--url', url, '--token', 't', '--order', '512345678901'], none, (t) => void (stderr += t))).toBe(2);
    expect(stderr).toMatch(/wrong version number \(an https:\/\/ URL to a sandbox that speaks plain http\?\)/);
    expect(stderr).not.toMatch(/SSL routines|openssl/);
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it.each([
    ['as a socket write meets it (listen)', 'write EPROTO 405DF32B297F0000:error:0A00010B:SSL routines:tls_validate_record_header:wrong version number:../deps/openssl/openssl/ssl/record/methods/tlsany_meth.c:77:\n'],
    ['as OpenSSL alone writes it', '80DC0B1C:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/openssl/ssl/record/ssl3_record.c:350:\n'],
  ])('reads %s', (_, message) => {
    expect(readableFailure(message, 'sandbox')).toBe('wrong version number (an https:// URL to a sandbox that speaks plain http?)');
  });

  it('leaves another failure as it is, on one line', () => {
    expect(readableFailure('connect ECONNREFUSED 127.0.0.1:9', 'sandbox')).toBe('connect ECONNREFUSED 127.0.0.1:9');
    expect(readableFailure('socket hang up\n', 'receiver')).toBe('socket hang up');
  });
});
