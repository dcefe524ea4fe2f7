import type { ChildProcess } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ListenServer, until } from '../client/listen-server.js';
import { runCli, spawnCli } from '../support/cli.js';
import { Receiver } from '../webhooks/receiver.js';

// `shipping-sandbox listen`'s exit codes through the real bin, against a fake sandbox that
// follows the listen protocol (test/client/listen.test.ts tests the forwarding in-process).

const TOKEN = 'listen-token';
let sandbox: ListenServer;
let receiver: Receiver;

beforeEach(async () => {
  sandbox = await ListenServer.start();
  receiver = await Receiver.start();
});
afterEach(async () => {
  await sandbox.close();
  await receiver.close();
});

/** The real bin, run to its end. */
const bin = (...args: string[]) => runCli(['listen', ...args], { SANDBOX_TOKENS: '' });

/** The real bin, left running; resolves with its exit code and output when it ends. */
function spawnListen(args: string[]): { child: ChildProcess; ended: Promise<{ code: number | null; stdout: string; stderr: string }>; stdout: () => string } {
  const child = spawnCli(['listen', ...args], { SANDBOX_TOKENS: '' });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const ended = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
  return { child, ended, stdout: () => stdout };
}

describe('shipping-sandbox listen: exit codes, through the real CLI', () => {
  it.each([
    [4001, 'replaced by a newer connection under this name'],
    [4003, 'listener endpoint disabled (a 410 Gone, or the API): fix the receiver, then start listen again'],
  ])('exits 1 without reconnecting when the sandbox closes with %i', async (closeCode, reason) => {
    const run = spawnListen(['--url', sandbox.url, '--token', TOKEN, '--forward-to', receiver.url]);
    await until(() => run.stdout().includes('Ready:'), 20_000);
    sandbox.socket.close(closeCode, reason);
    const { code, stderr } = await run.ended;
    expect(code).toBe(1);
    expect(stderr).toContain(`(${closeCode}): ${reason}`);
    expect(sandbox.openings).toHaveLength(1);
  });

  it('exits 1 with the envelope’s message when the sandbox refuses the opening (403)', async () => {
    sandbox.refuse = { status: 403, body: { success: false, message: 'A read_only token may not listen.', errors: [] } };
    const { code, stderr } = await bin('--url', sandbox.url, '--token', TOKEN, '--forward-to', receiver.url);
    expect(code).toBe(1);
    expect(stderr).toContain('the sandbox answered 403: A read_only token may not listen.');
    expect(sandbox.openings).toHaveLength(1);
  });

  it('exits 0 on SIGINT, closing the connection with 1000', async () => {
    const run = spawnListen(['--url', sandbox.url, '--token', TOKEN, '--forward-to', receiver.url]);
    await until(() => run.stdout().includes('Ready:'), 20_000);
    run.child.kill('SIGINT');
    expect((await run.ended).code).toBe(0);
    await until(() => sandbox.closes.length === 1);
    expect(sandbox.closes).toEqual([1000]);
  });

  it('exits 2 naming the flag for a usage error, before connecting', async () => {
    const [noForward, badEvent] = await Promise.all([
      bin('--url', sandbox.url, '--token', TOKEN),
      bin('--url', sandbox.url, '--token', TOKEN, '--forward-to', receiver.url, '--events', 'awb.exploded'),
    ]);
    expect(noForward).toMatchObject({ code: 2, stderr: expect.stringContaining("required option '--forward-to <url>' not specified") });
    expect(badEvent).toMatchObject({ code: 2, stderr: expect.stringMatching(/--events <list>.*"awb\.exploded" is not an event: use one or more of awb\.generated, awb\.failed, order\.cancelled/) });
    expect(sandbox.openings).toHaveLength(0);
  }, 60_000);
});
