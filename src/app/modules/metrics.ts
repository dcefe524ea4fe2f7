import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Counter, Gauge } from 'prom-client';
import type { OperationInput, SandboxModule } from '../../http/index.js';
import type { Services } from '../services.js';
import { realDataPath } from '../../store/index.js';
import { Unavailable, within } from '../../shared/index.js';
import { exposition } from '../../metrics/index.js';

/**
 * Who may read the metrics: resolves to let the request through, throws a domain error
 * (`Forbidden`, say) to refuse it. The default lets anyone read them.
 */
export type MetricsGuard = (input: OperationInput) => void | Promise<void>;

export interface MetricsModuleOptions {
  /** Decides who may read `GET /__sandbox/metrics`; default: anyone. */
  guard?: MetricsGuard;
}

/** Bytes of the embedded store's data file and of its journal segments (`<data>.wal.N`); none for `:memory:`. */
function storeBytes(data: string): { data: number; journal: number } | undefined {
  if (data === ':memory:' || data.includes('://')) return undefined;
  let dataBytes = 0;
  let journal = 0;
  try {
    // The journal is beside the real file, when --data is a symbolic link.
    const real = realDataPath(data);
    const dir = dirname(real);
    const name = basename(real);
    for (const file of readdirSync(dir)) {
      if (file === name) dataBytes = statSync(join(dir, file)).size;
      else if (file.startsWith(`${name}.wal.`)) journal += statSync(join(dir, file)).size;
    }
  } catch {
    return undefined; // the folder went away (or the link now loops): nothing to report
  }
  return { data: dataBytes, journal };
}

interface StoreFigures {
  orders: number;
  pending: number;
  paused: number;
  jobs: number;
}

/**
 * How long a scrape waits for the store's figures: a database that hangs would hold the
 * scrape for its statements' timeout (15 s), past a Prometheus scrape's own (10 s).
 */
const STORE_WAIT_MS = 2_000;

/** The figures a scrape reads from the store; undefined when the store cannot be read now. */
async function readStore({ storage, registry }: Pick<Services, 'storage' | 'registry'>): Promise<StoreFigures | undefined> {
  try {
    const held = { pending: 0, paused: 0 };
    for (const status of ['pending', 'paused'] as const) {
      for (const id of registry.clientIds) held[status] += await storage.deliveries.countByStatus(id, status);
    }
    return { orders: await storage.orders.count(), ...held, jobs: await storage.jobs.count() };
  } catch (error) {
    if (error instanceof Unavailable) return undefined;
    throw error;
  }
}

/**
 * `GET /__sandbox/metrics`: the sandbox's metrics in the Prometheus text format, from its
 * own registry (`services.metrics`). Counters are fed where things happen (requests by
 * this module's observer; orders, AWBs, attempts and scheduler lag through callbacks
 * wired in `sandbox.ts`); the outbox, store and event-loop figures are read at each scrape.
 *
 * @example metricsModule(services, { guard: (input) => requireAdmin(input) })
 */
export function metricsModule(services: Pick<Services, 'metrics' | 'storage' | 'registry' | 'options'>, options: MetricsModuleOptions = {}): SandboxModule {
  const { metrics, storage } = services;
  const register = metrics.registry;
  const loop = monitorEventLoopDelay({ resolution: 10 });
  // The figures read from the store, once per scrape (its gauges collect side by side); none
  // while it cannot be read (a database away): those gauges are NaN and sandbox_store_up
  // is 0, while the process's own figures are still scraped.
  let reading: Promise<StoreFigures | undefined> | undefined;
  const fromStore = (): Promise<StoreFigures | undefined> =>
    (reading ??= within(readStore(services), STORE_WAIT_MS).finally(() => {
      reading = undefined;
    }));

  new Gauge({
    name: 'sandbox_orders',
    help: 'Orders in the store, of every client.',
    registers: [register],
    async collect() {
      this.set((await fromStore())?.orders ?? NaN);
    },
  });
  new Gauge({
    name: 'sandbox_webhook_outbox',
    help: 'Webhook deliveries waiting, by status: pending (an attempt scheduled, due or in flight: the control API shows the due ones as queued) and paused (held for want of a URL or a live endpoint).',
    labelNames: ['status'] as const,
    registers: [register],
    async collect() {
      const figures = await fromStore();
      this.set({ status: 'pending' }, figures?.pending ?? NaN);
      this.set({ status: 'paused' }, figures?.paused ?? NaN);
    },
  });
  new Gauge({
    name: 'sandbox_jobs_pending',
    help: 'Due work in the store (AWBs, tracking steps, webhook attempts, retention), of every client.',
    registers: [register],
    async collect() {
      this.set((await fromStore())?.jobs ?? NaN);
    },
  });
  new Gauge({
    name: 'sandbox_store_up',
    help: 'Whether this scrape could read the store within 2 s: 0 while it cannot (a database away or hanging, every connection of the replica busy), the gauges read from it then NaN.',
    registers: [register],
    async collect() {
      this.set((await fromStore()) ? 1 : 0);
    },
  });
  let busyWaitsSeen = 0;
  new Counter({
    name: 'sandbox_store_busy_waits_total',
    help: 'PostgreSQL: requests and jobs of this replica that waited the whole connection timeout with every database connection busy while the database kept answering (answered 503, or given back and retried).',
    registers: [register],
    collect() {
      const busyWaits = storage.health().busyWaits ?? 0;
      this.inc(busyWaits - busyWaitsSeen);
      busyWaitsSeen = busyWaits;
    },
  });
  new Gauge({
    name: 'sandbox_store_bytes',
    help: 'Size of the embedded store on disk: the data file and its journal segments.',
    labelNames: ['file'] as const,
    registers: [register],
    collect() {
      const bytes = storeBytes(services.options.data);
      if (!bytes) return;
      this.set({ file: 'data' }, bytes.data);
      this.set({ file: 'journal' }, bytes.journal);
    },
  });
  new Gauge({
    name: 'sandbox_event_loop_delay_seconds',
    help: 'Event-loop delay since the previous scrape (perf_hooks.monitorEventLoopDelay): p50, p99, p999 and max.',
    labelNames: ['stat'] as const,
    registers: [register],
    collect() {
      if (loop.count === 0) return;
      for (const [stat, ns] of [['p50', loop.percentile(50)], ['p99', loop.percentile(99)], ['p999', loop.percentile(99.9)], ['max', loop.max]] as const) {
        this.set({ stat }, ns / 1e9);
      }
      loop.reset();
    },
  });
  new Gauge({
    name: 'process_resident_memory_bytes',
    help: 'Resident memory of the process (process.memoryUsage().rss).',
    registers: [register],
    collect() {
      this.set(process.memoryUsage().rss);
    },
  });

  return {
    name: 'metrics',
    handlers: {
      getMetrics: async (input) => {
        await options.guard?.(input);
        return { status: 200, serialized: exposition(await register.metrics()), type: register.contentType };
      },
    },
    observeRequests: (served) => metrics.served(served),
    start: () => {
      loop.enable();
    },
    close: () => {
      loop.disable();
    },
  };
}
