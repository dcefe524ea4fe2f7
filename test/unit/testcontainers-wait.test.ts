import http from 'node:http';
import type { BoundPorts, WaitStrategy } from 'testcontainers';
import { afterEach, describe, expect, it } from 'vitest';
import { demuxLogs, SandboxHealthWait } from '../../src/client/testcontainers-wait.js';
import { heldServer } from '../support/held-server.js';

type Container = Parameters<WaitStrategy['waitUntilReady']>[0];

/** One frame of the engine's log stream without a TTY: stream 1 (stdout) or 2 (stderr), the length, the bytes. */
const frame = (stream: 1 | 2, text: string) => {
  const body = Buffer.from(text);
  const head = Buffer.from([stream, 0, 0, 0, 0, 0, 0, 0]);
  head.writeUInt32BE(body.length, 4);
  return Buffer.concat([head, body]);
};

/** A container as the wait sees it: its state, and its logs read once. */
const container = (status: string, exitCode: number, logs: Buffer) =>
  ({ inspect: async () => ({ State: { Status: status, ExitCode: exitCode } }), logs: async () => logs }) as unknown as Container;
const ports = (port: number) => ({ getBinding: () => port }) as unknown as BoundPorts;

const refused = Buffer.concat([
  frame(1, 'shipping-sandbox 1.0.0\n'),
  frame(2, 'variable SANDBOX_CLOCK_START (--clock-start) is invalid: a start time is for a manual clock only\n'),
]);

describe('SandboxHealthWait (the module\'s wait on GET /__sandbox/health)', () => {
  it('fails at once when the container has exited, with its exit code and its own last log lines, not after the startup timeout', async () => {
    const wait = new SandboxHealthWait(4010, async () => { throw new Error('no host asked of an exited container'); }).withStartupTimeout(60_000);
    const started = Date.now();
    const failure = await wait.waitUntilReady(container('exited', 1, refused), ports(1)).catch((error: Error) => error);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((failure as Error).message).toBe(
      'The sandbox container exited with code 1 before /__sandbox/health answered 200. Its last log lines:\n' +
        '  shipping-sandbox 1.0.0\n' +
        '  variable SANDBOX_CLOCK_START (--clock-start) is invalid: a start time is for a manual clock only',
    );
  });

  it('returns once the health endpoint answers 200 at the mapped port', async () => {
    const health = await heldServer((req, res) => res.writeHead(req.url === '/__sandbox/health' ? 200 : 404).end());
    try {
      const wait = new SandboxHealthWait(4010, async () => '127.0.0.1');
      await wait.waitUntilReady(container('running', 0, Buffer.alloc(0)), ports(Number(new URL(health.url).port)));
      expect(health.requests).toEqual(['GET /__sandbox/health']);
    } finally {
      await health.close();
    }
  });

  it('gives up at the startup timeout on a running container that never answers 200, with its last log lines', async () => {
    const unready = await heldServer((_req, res) => res.writeHead(503).end());
    try {
      const wait = new SandboxHealthWait(4010, async () => '127.0.0.1').withStartupTimeout(300);
      const failure = wait.waitUntilReady(container('running', 0, frame(1, 'replaying the journal\n')), ports(Number(new URL(unready.url).port)));
      await expect(failure).rejects.toThrow(`The sandbox did not answer http://127.0.0.1:${new URL(unready.url).port}/__sandbox/health with 200 within 300 ms. Its last log lines:\n  replaying the journal`);
    } finally {
      await unready.close();
    }
  });
});

describe('SandboxHealthWait when the engine cannot show the container', () => {
  /** A container whose every inspect is refused as dockerode refuses it. */
  const unseen = (statusCode: number, message: string) =>
    ({ inspect: async () => Promise.reject(Object.assign(new Error(message), { statusCode })), logs: async () => Promise.reject(new Error(message)) }) as unknown as Container;

  it('fails at once when the container is gone (removed after it exited, as with auto-remove), saying why its logs are gone too', async () => {
    const wait = new SandboxHealthWait(4010, async () => '127.0.0.1').withStartupTimeout(60_000);
    const started = Date.now();
    const failure = await wait.waitUntilReady(unseen(404, '(HTTP code 404) no such container - No such container: 3f2a'), ports(1)).catch((error: Error) => error);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((failure as Error).message).toBe(
      'The sandbox container was removed before /__sandbox/health answered 200 (the engine says: (HTTP code 404) no such container - No such container: 3f2a). ' +
        'Started with auto-remove, a container that exits takes its exit code and logs with it: start it without, to read them.',
    );
  });

  it("names the engine's last refusal in the timeout's error when every inspect failed", async () => {
    const unready = await heldServer((_req, res) => res.writeHead(503).end());
    try {
      const port = Number(new URL(unready.url).port);
      const wait = new SandboxHealthWait(4010, async () => '127.0.0.1').withStartupTimeout(300);
      await expect(wait.waitUntilReady(unseen(500, '(HTTP code 500) server error - engine busy'), ports(port))).rejects.toThrow(
        `The sandbox did not answer http://127.0.0.1:${port}/__sandbox/health with 200 within 300 ms. The engine's last inspect of the container failed: (HTTP code 500) server error - engine busy. ` +
          'Its last log lines:\n  (its logs could not be read: (HTTP code 500) server error - engine busy)',
      );
    } finally {
      await unready.close();
    }
  });
});

describe('SandboxHealthWait in a test suite that mocks the network (msw, nock)', () => {
  const realFetch = globalThis.fetch;
  const { get, request } = http;
  afterEach(() => {
    globalThis.fetch = realFetch;
    Object.assign(http, { get, request });
  });

  it('probes the health endpoint without the global fetch or node:http, and asks an engine that failed once again', async () => {
    const refused = () => {
      throw new Error('[MSW] Cannot bypass a request when using the "error" strategy for the "onUnhandledRequest" option.');
    };
    globalThis.fetch = async () => refused();
    Object.assign(http, { get: refused, request: refused });
    const health = await heldServer((req, res) => res.writeHead(req.url === '/__sandbox/health' ? 200 : 404).end());
    try {
      let inspected = 0;
      const flaky = { ...container('running', 0, Buffer.alloc(0)), inspect: async () => (++inspected === 1 ? Promise.reject(new Error('engine busy')) : { State: { Status: 'running', ExitCode: 0 } }) } as unknown as Container;
      await new SandboxHealthWait(4010, async () => '127.0.0.1').withStartupTimeout(5_000).waitUntilReady(flaky, ports(Number(new URL(health.url).port)));
      expect(health.requests).toEqual(['GET /__sandbox/health']);
    } finally {
      await health.close();
    }
  });
});

describe('demuxLogs', () => {
  it.each([
    ['framed stdout and stderr, in order', Buffer.concat([frame(1, 'a\n'), frame(2, 'b\n')]), 'a\nb\n'],
    ['text of a container with a TTY (no frames)', Buffer.from('plain line\n'), 'plain line\n'],
    ['nothing', Buffer.alloc(0), ''],
  ])('reads %s', (_what, raw, text) => {
    expect(demuxLogs(raw)).toBe(text);
  });
});
