import { request } from 'undici';
import { getContainerRuntimeClient, type BoundPorts, type WaitStrategy } from 'testcontainers';

/** The container as Testcontainers hands it to a wait strategy (dockerode's), without naming dockerode. */
type Container = Parameters<WaitStrategy['waitUntilReady']>[0];

/** The endpoint the wait asks until it answers 200. */
export const HEALTH_PATH = '/__sandbox/health';
/** How many of the container's last log lines an error of the start carries. */
export const LOG_LINES = 20;
const PROBE_EVERY_MS = 250;
const PROBE_TIMEOUT_MS = 1_000;
const LOGS_TIMEOUT_MS = 5_000;
/** The states of a container that will not answer any more (podman's compatible API says `stopped` too). */
const ENDED = new Set(['exited', 'dead', 'stopped']);

/**
 * The text of a container's logs as the engine sends them without a TTY: frames of an
 * 8-byte header (stream 1 or 2, then the length) and the bytes; text that is not framed
 * (a container with a TTY) is taken as it is.
 *
 * @example demuxLogs(Buffer.concat([Buffer.from([2, 0, 0, 0, 0, 0, 0, 3]), Buffer.from('hi\n')])) // 'hi\n'
 */
export function demuxLogs(raw: Buffer): string {
  const parts: Buffer[] = [];
  let at = 0;
  while (at + 8 <= raw.length && (raw[at] === 1 || raw[at] === 2) && raw[at + 1] === 0 && raw[at + 2] === 0 && raw[at + 3] === 0) {
    const size = raw.readUInt32BE(at + 4);
    parts.push(raw.subarray(at + 8, at + 8 + size));
    at += 8 + size;
  }
  return at === 0 ? raw.toString('utf8') : Buffer.concat([...parts, raw.subarray(at)]).toString('utf8');
}

/** The error of a container that ended before its health answered: its exit code and its own last words. */
export function exitedMessage(exitCode: number, logs: string): string {
  return `The sandbox container exited with code ${exitCode} before ${HEALTH_PATH} answered 200. ${logSection(logs)}`;
}

/** The error of a container that was removed before its health answered (one started with auto-remove that exited): the engine's word for it. */
export function goneMessage(engineError: string): string {
  return `The sandbox container was removed before ${HEALTH_PATH} answered 200 (the engine says: ${engineError}). Started with auto-remove, a container that exits takes its exit code and logs with it: start it without, to read them.`;
}

/**
 * The error of a container still running but not healthy when the startup timeout ran out: the
 * URL asked (a wrong host shows), the engine's last refusal to inspect it if it had one (a
 * container the wait could not see), and its logs.
 */
export function notReadyMessage(timeoutMs: number, url: string, logs: string, inspectError?: string): string {
  const engine = inspectError === undefined ? '' : ` The engine's last inspect of the container failed: ${inspectError}.`;
  return `The sandbox did not answer ${url} with 200 within ${timeoutMs} ms.${engine} ${logSection(logs)}`;
}

function logSection(logs: string): string {
  const lines = logs.split('\n').map((line) => line.trimEnd()).filter(Boolean).slice(-LOG_LINES);
  return lines.length === 0 ? 'It logged nothing.' : `Its last log lines:\n${lines.map((line) => `  ${line}`).join('\n')}`;
}

/** The container's last LOG_LINES lines, read once (not followed: a followed read of an exited container may never end). */
async function lastLogs(container: Container): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const raw = await Promise.race([
      container.logs({ stdout: true, stderr: true, follow: false, tail: LOG_LINES }),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${LOGS_TIMEOUT_MS} ms`)), LOGS_TIMEOUT_MS))),
    ]);
    return demuxLogs(Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw)));
  } catch (error) {
    return `(its logs could not be read: ${(error as Error).message})`;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether the URL answers 200 within PROBE_TIMEOUT_MS in all, asked with undici's own
 * request, as testcontainers' wait does: not the global fetch nor node:http, which a test
 * suite that mocks the network (msw, nock) may have taken over before it starts the container.
 */
async function answers200(url: string): Promise<boolean> {
  try {
    const res = await request(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    await res.body.dump();
    return res.statusCode === 200;
  } catch {
    return false;
  }
}

/**
 * Waits until `GET /__sandbox/health` answers 200, and gives up as soon as the container
 * has ended (a start refused: a bad variable, a data file in use), with its exit code and
 * last log lines, instead of probing a dead port until the startup timeout. Testcontainers
 * stops and removes the container after the error.
 */
export class SandboxHealthWait implements WaitStrategy {
  private startupTimeoutMs = 60_000;
  private startupTimeoutSet = false;

  constructor(
    private readonly port: number,
    /** The host the test process reaches the container's ports at. */
    private readonly hostOf: () => Promise<string> = async () => (await getContainerRuntimeClient()).info.containerRuntime.host,
  ) {}

  async waitUntilReady(container: Container, boundPorts: BoundPorts): Promise<void> {
    const end = Date.now() + this.startupTimeoutMs;
    let url: string | undefined;
    for (;;) {
      // An inspect that fails (the engine busy) is asked again at the next probe, as the health
      // is; one that says the container is gone (404) is final.
      let inspectError: (Error & { statusCode?: number }) | undefined;
      const state = (await container.inspect().catch((error: Error) => void (inspectError = error)))?.State;
      if (inspectError?.statusCode === 404) throw new Error(goneMessage(inspectError.message));
      if (state && ENDED.has(state.Status)) throw new Error(exitedMessage(state.ExitCode, await lastLogs(container)));
      url ??= `http://${await this.hostOf()}:${boundPorts.getBinding(this.port)}${HEALTH_PATH}`;
      if (await answers200(url)) return;
      if (Date.now() >= end) throw new Error(notReadyMessage(this.startupTimeoutMs, url, await lastLogs(container), inspectError?.message));
      await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
    }
  }

  withStartupTimeout(startupTimeoutMs: number): this {
    this.startupTimeoutMs = startupTimeoutMs;
    this.startupTimeoutSet = true;
    return this;
  }

  isStartupTimeoutSet(): boolean {
    return this.startupTimeoutSet;
  }

  getStartupTimeout(): number {
    return this.startupTimeoutMs;
  }
}
