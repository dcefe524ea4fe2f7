import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runListen } from '../../src/client/listen.js';
import type { ListenTuning } from '../../src/client/listen-session.js';
import { timed } from '../support/held-server.js';
import { ListenServer } from './listen-server.js';

const TOKEN = 'listen-token';
/** The CLI's own bounds, with a reconnect wait short enough for a test. */
const FAST: ListenTuning = { concurrency: 16, backoffMs: () => 50, silenceMs: 45_000 };

let sandbox: ListenServer;
beforeEach(async () => {
  sandbox = await ListenServer.start();
});
afterEach(() => sandbox.close());

/** `shipping-sandbox listen` until it exits by itself, or `ms` (then stopped, as by Ctrl-C). */
const listenFor = (url: string, ms = 3000) =>
  timed((out, err) => runListen(['--url', url, '--token', TOKEN, '--forward-to', 'http://127.0.0.1:9/hooks', '--name', 'dev-laptop'], out, err, {}, AbortSignal.timeout(ms), FAST));

describe('shipping-sandbox listen: the first connection', () => {
  it('exits 2 at once naming the mistake, when an https:// --url reaches a sandbox that speaks plain http', async () => {
    const https = sandbox.url.replace(/^http:/, 'https:');
    const { code, stdout, stderr, ms } = await listenFor(https);
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr).toBe(`shipping-sandbox listen: could not connect (wrong version number (an https:// URL to a sandbox that speaks plain http?)): the sandbox at --url speaks plain http; use --url ${sandbox.url}\n`);
    expect(ms).toBeLessThan(2000);
    expect(sandbox.openings).toEqual([]);
  });

  it('keeps trying while nothing listens at --url (a sandbox still starting)', async () => {
    const port = new URL(sandbox.url).port;
    await sandbox.close();
    const { code, stderr } = await listenFor(`http://127.0.0.1:${port}`, 500);
    expect(code).toBe(0);
    expect(stderr).toMatch(/could not connect .*; reconnecting in 0\.1 s \(try 2\)/);
    sandbox = await ListenServer.start();
  });
});

describe('shipping-sandbox listen --help', () => {
  it('lists every exit code: 0 on a stop, 1 for a refusal, 2 for a bad flag, no token, or a --url that is no shipping sandbox', async () => {
    const { code, stdout } = await timed(async (out, err) => runListen(['--help'], out, err, {}, new AbortController().signal));
    expect(code).toBe(0);
    const text = stdout.replace(/\s+/g, ' ');
    expect(text).toContain('Exits 0 on Ctrl-C or SIGTERM; 1 when the sandbox refuses or ends the listener; 2 for a bad flag, no token,');
    expect(text).toContain('"is it a shipping sandbox?"');
    expect(text).toContain('an https:// URL to a sandbox that speaks plain http');
  });
});
