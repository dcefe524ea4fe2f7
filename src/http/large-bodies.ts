import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { FieldError } from './errors.js';
import { WAITING_PER_CLIENT } from './turns.js';

/** A JSON body larger than this is parsed and validated on the worker thread before its turn. */
export const LARGE_BODY_BYTES = 64 * 1024;

/** What the worker compiles the specs from: the provider spec's file and the item limit (`--spec`, `--max-items`). */
export interface LargeBodySource {
  providerSpec: string;
  maxItems: number;
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

const shared = new Map<string, LargeBodies>();

/** The process's LargeBodies for the specs of `source`: one worker for every sandbox of the process serving them. */
export function largeBodiesFor(source: LargeBodySource): LargeBodies {
  const key = JSON.stringify([source.providerSpec, source.maxItems]);
  let bodies = shared.get(key);
  if (!bodies) shared.set(key, (bodies = new LargeBodies(source)));
  return bodies;
}

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
 * waiting here, or a worker that failed, leaves the check to the turn (resolves
 * undefined): the answer is the same, only computed on the loop.
 *
 * The worker starts with the first large body and does not keep the process alive.
 */
export class LargeBodies {
  private worker: Worker | undefined;
  private broken = false;
  /** Each client's bodies waiting for the worker, in arrival order; clients in the order of their next turn. */
  private readonly waiting = new Map<string, Pending[]>();
  /** The bytes of each client's bodies waiting or being checked. */
  private readonly bytes = new Map<string, number>();
  private current: { id: number; pending: Pending } | undefined;
  private ids = 0;

  constructor(
    private readonly source: LargeBodySource,
    private readonly mostBytesPerClient = WAITING_PER_CLIENT.bytes,
  ) {}

  /** The worker's verdict on a large body of `lane`'s request; undefined when the turn must check it (see the class). */
  check(lane: string, spec: BodyCheck['spec'], operationId: string, raw: Buffer): Promise<BodyVerdict | undefined> {
    const bytes = this.bytes.get(lane) ?? 0;
    if (this.broken || (bytes > 0 && bytes + raw.length > this.mostBytesPerClient)) return Promise.resolve(undefined);
    this.bytes.set(lane, bytes + raw.length);
    return new Promise((resolve) => {
      const pending = { lane, check: { spec, operationId, bytes: raw }, resolve };
      const queue = this.waiting.get(lane);
      if (queue) queue.push(pending);
      else this.waiting.set(lane, [pending]);
      this.next();
    });
  }

  /** Stops the worker; bodies still waiting are left to their turns. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.fail();
    await worker?.terminate();
  }

  /** Sends the next client's first body to the worker, that client going to the back of the rotation. */
  private next(): void {
    if (this.current || this.waiting.size === 0) return;
    const [lane, queue] = this.waiting.entries().next().value!;
    const pending = queue.shift()!;
    this.waiting.delete(lane);
    if (queue.length > 0) this.waiting.set(lane, queue);
    this.current = { id: ++this.ids, pending };
    try {
      this.running().postMessage({ id: this.current.id, ...pending.check });
    } catch {
      this.fail();
    }
  }

  private running(): Worker {
    if (this.worker) return this.worker;
    const [script, options] = workerScript();
    const worker = new Worker(script, { ...options, workerData: this.source, execArgv: [] });
    worker.unref();
    worker.on('message', (message: { id: number; verdict?: BodyVerdict }) => this.answered(message));
    worker.on('error', () => this.fail());
    worker.on('exit', () => this.fail());
    this.worker = worker;
    return worker;
  }

  private answered({ id, verdict }: { id: number; verdict?: BodyVerdict }): void {
    if (this.current?.id !== id) return;
    const { pending } = this.current;
    this.current = undefined;
    this.settle(pending, verdict);
    this.next();
  }

  private settle(pending: Pending, verdict: BodyVerdict | undefined): void {
    const left = (this.bytes.get(pending.lane) ?? 0) - pending.check.bytes.length;
    if (left > 0) this.bytes.set(pending.lane, left);
    else this.bytes.delete(pending.lane);
    pending.resolve(verdict);
  }

  /** The worker is gone: every body waiting for it is left to its turn, and so is every later one. */
  private fail(): void {
    this.broken = true;
    this.worker = undefined;
    const left = [...(this.current ? [this.current.pending] : []), ...[...this.waiting.values()].flat()];
    this.current = undefined;
    this.waiting.clear();
    for (const pending of left) this.settle(pending, undefined);
  }
}
