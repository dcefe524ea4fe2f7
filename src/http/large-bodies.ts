import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { WAITING_PER_CLIENT } from '../shared/index.js';
import type { OpenApiDocument } from '../spec/index.js';
import type { FieldError } from './errors.js';

// Taken when the module loads: a test suite that fakes the timers afterwards must not
// make a body's deadline a fake one (or clear a real one with a fake clearTimeout).
const { setTimeout, clearTimeout, setImmediate } = globalThis;

/** A JSON body larger than this is parsed and validated on the worker thread before its turn. */
export const LARGE_BODY_BYTES = 64 * 1024;

/** What the worker compiles the specs from: the documents the sandbox compiled (so both validate against the same spec, even if its file changes later). */
export interface LargeBodySource {
  provider: OpenApiDocument;
  control: OpenApiDocument;
}

/** One body to check: the spec and operation it was sent to, and its bytes. */
export interface BodyCheck {
  spec: 'provider' | 'control';
  operationId: string;
  bytes: Uint8Array;
}

/** The worker's verdict: the 400 the body stage would throw (not JSON, too deep), or the body's schema problems (none: valid). */
export type BodyVerdict = { refused: { status: number; message: string; errors: FieldError[] } } | { problems: FieldError[] };

/**
 * The worker's script: the built module, or from the sources (the tests, tsx) a small
 * script that registers tsx's loader in the worker first, as a worker does not inherit it.
 */
function workerScript(): [string | URL, { eval?: boolean }] {
  if (!import.meta.url.endsWith('.ts')) return [new URL('./large-body-worker.js', import.meta.url), {}];
  // tsx's ES module entry (its package's exports map), as `import` would resolve it from here.
  const require = createRequire(import.meta.url);
  const manifest = require('tsx/package.json') as { exports: Record<string, { import: { default: string } }> };
  const tsx = pathToFileURL(join(dirname(require.resolve('tsx/package.json')), manifest.exports['./esm/api']!.import.default)).href;
  const worker = new URL('./large-body-worker.ts', import.meta.url).href;
  return [`import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(worker)}); });`, { eval: true }];
}

const shared = new WeakMap<OpenApiDocument, LargeBodies>();

/** The process's LargeBodies for the specs of `source`: one worker for every sandbox of the process serving the same compiled specs. */
export function largeBodiesFor(source: LargeBodySource, onFailure?: (why: string) => void): LargeBodies {
  let bodies = shared.get(source.provider);
  if (!bodies) shared.set(source.provider, (bodies = new LargeBodies(source, onFailure)));
  return bodies;
}

/** How long the worker may take over one body (ms): a second, and a second more per MiB. */
const deadlineMs = (bytes: number): number => 1_000 + Math.ceil(bytes / 2 ** 20) * 1_000;

/** What a new worker is given on top of its first body's deadline, to start and compile the specs. */
const WORKER_START_MS = 5_000;

/** Failures of the worker in a row (its error, exit or a missed deadline) after which it is not started again. */
const MOST_FAILURES = 3;

interface Pending {
  lane: string;
  check: BodyCheck;
  resolve: (verdict: BodyVerdict | undefined) => void;
}

/**
 * Large JSON bodies parsed and validated on one worker thread, so that one partner's
 * large bodies do not hold the event loop that serves every partner. A fair turn bounds
 * how long another client waits behind one request; parsing and validating a body of a
 * megabyte is tens of milliseconds, and its garbage more, so that bound is too long.
 *
 * A request's check runs before its turn: a body the worker finds not JSON, too deep or
 * invalid is refused in the turn with the worker's errors, unparsed; a valid one is
 * parsed in the turn as any other (it is the handler's input). The worker takes the
 * clients' bodies in rotation, one at a time, so that one client's queue of large
 * bodies does not delay another's. A client with more than WAITING_PER_CLIENT's bytes
 * waiting here leaves the check to the turn (resolves undefined): the answer is the same,
 * only computed on the loop. So does a worker that fails or takes longer than its
 * deadline over a body (a second, plus a second per MiB): it is ended, the body left to
 * its turn, and a new worker takes the next one; after MOST_FAILURES in a row none is
 * started again, and every large body is checked in its turn.
 *
 * The worker starts with the first large body and does not keep the process alive.
 */
export class LargeBodies {
  private worker: Worker | undefined;
  private failures = 0;
  /** Each client's bodies waiting for the worker, in arrival order; clients in the order of their next turn. */
  private readonly waiting = new Map<string, Pending[]>();
  /** The bytes of each client's bodies waiting or being checked. */
  private readonly bytes = new Map<string, number>();
  private current: { id: number; pending: Pending; deadline: NodeJS.Timeout } | undefined;
  private ids = 0;

  constructor(
    private readonly source: LargeBodySource,
    private readonly onFailure: (why: string) => void = () => undefined,
    private readonly mostBytesPerClient = WAITING_PER_CLIENT.bytes,
  ) {}

  /** The worker's verdict on a large body of `lane`'s request; undefined when the turn must check it (see the class). */
  check(lane: string, spec: BodyCheck['spec'], operationId: string, raw: Buffer): Promise<BodyVerdict | undefined> {
    const bytes = this.bytes.get(lane) ?? 0;
    if (this.failures >= MOST_FAILURES || (bytes > 0 && bytes + raw.length > this.mostBytesPerClient)) return Promise.resolve(undefined);
    this.bytes.set(lane, bytes + raw.length);
    return new Promise((resolve) => {
      const pending = { lane, check: { spec, operationId, bytes: raw }, resolve };
      const queue = this.waiting.get(lane);
      if (queue) queue.push(pending);
      else this.waiting.set(lane, [pending]);
      this.next();
    });
  }

  /** Stops the worker; bodies waiting for it are left to their turns. A later large body starts another. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.leaveAll();
    await worker?.terminate();
  }

  /** Sends the next client's first body to the worker, that client going to the back of the rotation. */
  private next(): void {
    if (this.current || this.waiting.size === 0) return;
    const [lane, queue] = this.waiting.entries().next().value!;
    const pending = queue.shift()!;
    this.waiting.delete(lane);
    if (queue.length > 0) this.waiting.set(lane, queue);
    const id = ++this.ids;
    // A worker started for this body first loads and compiles the specs: that is not the body's time.
    const ms = deadlineMs(pending.check.bytes.length) + (this.worker ? 0 : WORKER_START_MS);
    // The verdict one phase later (setImmediate runs after the loop's poll phase): a stalled loop may find the deadline passed
    // before it has read the answer the worker sent in time, and three such misses in a row would end the worker for good.
    const missed = () => this.current?.id === id && this.failed(`it took longer than ${ms} ms over a body of ${pending.check.bytes.length} bytes`);
    const deadline = setTimeout(() => setImmediate(missed), ms);
    deadline.unref();
    this.current = { id, pending, deadline };
    try {
      this.running().postMessage({ id, ...pending.check });
    } catch (error) {
      this.failed(String(error));
    }
  }

  private running(): Worker {
    if (this.worker) return this.worker;
    const [script, options] = workerScript();
    const worker = new Worker(script, { ...options, workerData: this.source, execArgv: [] });
    worker.on('message', (message: { id: number; verdict?: BodyVerdict; failed?: string }) => this.answered(message));
    worker.on('error', (error) => this.worker === worker && this.failed(error.message));
    worker.on('exit', (code) => this.worker === worker && this.failed(`it exited (code ${code})`));
    // After the listeners: adding a 'message' listener makes the worker keep the process alive again.
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private answered({ id, verdict, failed }: { id: number; verdict?: BodyVerdict; failed?: string }): void {
    if (this.current?.id !== id) return;
    const { pending, deadline } = this.current;
    clearTimeout(deadline);
    this.current = undefined;
    if (failed === undefined) this.failures = 0;
    else this.onFailure(`the large-body worker could not check a body (${failed}); it is checked in its turn`);
    this.settle(pending, verdict);
    this.next();
  }

  private settle(pending: Pending, verdict: BodyVerdict | undefined): void {
    const left = (this.bytes.get(pending.lane) ?? 0) - pending.check.bytes.length;
    if (left > 0) this.bytes.set(pending.lane, left);
    else this.bytes.delete(pending.lane);
    pending.resolve(verdict);
  }

  /** The worker failed: it is ended, the body it had is left to its turn, and a new worker takes the next (none after MOST_FAILURES in a row). */
  private failed(why: string): void {
    const worker = this.worker;
    this.worker = undefined;
    void worker?.terminate();
    this.failures += 1;
    const last = this.failures >= MOST_FAILURES;
    this.onFailure(`the large-body worker failed: ${why}; ${last ? 'large bodies are checked in their turns from now on' : 'the body is checked in its turn, and a new worker takes the next'}`);
    if (this.current) {
      clearTimeout(this.current.deadline);
      this.settle(this.current.pending, undefined);
      this.current = undefined;
    }
    if (last) this.leaveAll();
    else this.next();
  }

  /** Every body waiting or being checked is left to its turn. */
  private leaveAll(): void {
    const left = [...(this.current ? [this.current.pending] : []), ...[...this.waiting.values()].flat()];
    if (this.current) clearTimeout(this.current.deadline);
    this.current = undefined;
    this.waiting.clear();
    for (const pending of left) this.settle(pending, undefined);
  }
}
