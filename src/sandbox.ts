import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import { pino } from 'pino';
import { createApp } from './app.js';
import { sandboxModules } from './modules.js';
import { ManualClock, RealClock, type Clock } from './clock/clock.js';
import { Scheduler } from './clock/scheduler.js';
import { answerClientErrors } from './http/client-error.js';
import { ClientRegistry, type Client, type ClientConfig } from './config/clients.js';
import { parseDelayRange } from './config/duration.js';
import { checkClientConfigs } from './config/check.js';
import { readConfigFile } from './config/file.js';
import { resolveOptions, type SandboxOptions } from './config/options.js';
import { EventBus } from './events.js';
import { loadFixtures } from './fixtures/load.js';
import { hash32 } from './ids/random.js';
import { IdFactory } from './ids/factory.js';
import { OrdersService } from './orders/service.js';
import type { Order } from './orders/types.js';
import type { SandboxModule } from './module.js';
import type { Services } from './services.js';
import { compileSpec } from './spec/compile.js';
import { CONTROL_SPEC, loadSpec } from './spec/load.js';
import { Store } from './store/store.js';
import { Journey } from './tracking/journey.js';

/** The sandbox clock as in-process users see it. */
export interface SandboxClock {
  readonly mode: 'real' | 'manual';
  now(): number;
  /** Manual clock only: moves on by `ms` and resolves once everything due has run. */
  advance(ms: number): Promise<void>;
}

/** A running sandbox. */
export interface Sandbox {
  /** Base URL, e.g. `http://127.0.0.1:53211`. */
  url: string;
  port: number;
  /** The configured clients; `clients[0].token` is the default token when none was given. */
  clients: Client[];
  clock: SandboxClock;
  app: Express;
  services: Services;
  modules: SandboxModule[];
  /** Stops accepting requests, finishes those in flight, flushes the store. */
  close(): Promise<void>;
}

/** The clients of the config file, of `clients` and of `--token`, in that order. */
function configuredClients(options: ReturnType<typeof resolveOptions>): ClientConfig[] {
  return [
    ...(options.config ? (readConfigFile(options.config).clients ?? []) : []),
    ...options.clients,
    ...options.tokens.filter((t) => t !== '').map((token) => ({ token })),
  ];
}

/** With no client configured: one default client whose token is kept in the store (printed at start). */
function defaultClient(options: ReturnType<typeof resolveOptions>, store: Store): ClientConfig {
  let token = store.get<string>('meta', 'default_token');
  if (!token) {
    token = options.seed !== undefined ? `sbx_${hash32(`token:${options.seed}`).toString(16).padStart(8, '0')}` : `sbx_${randomBytes(12).toString('hex')}`;
    store.put('meta', 'default_token', token);
  }
  return { token, id: 'default', name: 'default' };
}

/** A manual clock resumes where the data file's stopped, or at --clock-start if that is later. */
function manualClockStart(clockStart: string | undefined, store: Store): number {
  const kept = store.get<number>('meta', 'manual_clock_ms');
  if (clockStart === undefined) return kept ?? Date.now();
  const start = /^\d+$/.test(clockStart) ? Number(clockStart) : Date.parse(clockStart);
  if (Number.isNaN(start)) throw new Error(`clockStart "${clockStart}" is not a time: use ISO 8601 (2026-01-01T00:00:00Z) or epoch milliseconds.`);
  return Math.max(kept ?? start, start);
}

/**
 * Builds every service of the sandbox without listening: for tests that drive the
 * app with supertest.
 */
export async function buildServices(input: SandboxOptions = {}): Promise<Services> {
  const options = resolveOptions(input);
  const logger = pino({ level: options.logLevel, base: undefined, redact: ['req.headers.authorization', '*.token', '*.secret'] });
  const awbDelay = parseDelayRange(options.awbDelay);
  if (!awbDelay) throw new Error(`awbDelay "${options.awbDelay}" is not a delay: use 0, 500ms, 3s or a range such as 2s-10s.`);
  const fixtures = loadFixtures();
  if (!fixtures.scenarios.has(options.scenario)) {
    throw new Error(`Unknown scenario "${options.scenario}": use one of ${[...fixtures.scenarios.keys()].join(', ')}.`);
  }
  const providerDocument = loadSpec(options.providerSpec);
  // A spec swapped in with --spec may not have this schema; then the limit is only the rule's.
  const itemsSchema = (providerDocument.components as { schemas?: Record<string, { properties?: Record<string, { maxItems?: number }> }> } | undefined)
    ?.schemas?.CreateOrderRequest?.properties?.items;
  if (itemsSchema) itemsSchema.maxItems = options.maxItems;
  const specs = { provider: compileSpec(providerDocument, 'provider'), control: compileSpec(loadSpec(CONTROL_SPEC), 'control') };

  const configured = configuredClients(options);
  checkClientConfigs(configured, { scenarios: [...fixtures.scenarios.keys()], couriers: [...fixtures.couriers.keys()] });
  const store = await Store.open({ path: options.data, fsync: options.fsync, onError: (e) => logger.error({ err: e }, 'store write failed') });
  const clock: Clock = options.clock === 'manual' ? new ManualClock(manualClockStart(options.clockStart, store)) : new RealClock(options.speed);
  const events = new EventBus();
  const scheduler = new Scheduler(clock, { onError: (err, kind, key) => logger.error({ err, kind, key }, 'scheduled job failed') });
  const registry = new ClientRegistry(configured.length > 0 ? configured : [defaultClient(options, store)]);
  const orders = new OrdersService(store, fixtures, clock, { defaultScenario: options.scenario, awbDelay, maxItems: options.maxItems });
  const ids = new IdFactory(store, options.seed, (kind, id) => orders.exists(kind, id));
  const journey = new Journey({
    store,
    fixtures,
    ids,
    scheduler,
    clock,
    events,
    order: (orderNo) => store.get<Order>('orders', orderNo),
    indexAwb: (order) => orders.index(order),
  });
  orders.connect(ids, journey);
  for (const order of store.values<Order>('orders')) journey.resume(order);
  store.commit();
  const advanceClock = async (ms: number): Promise<void> => {
    await scheduler.advance(ms);
    store.put('meta', 'manual_clock_ms', clock.now());
    store.commit();
  };
  return { options, logger, store, fixtures, clock, scheduler, events, registry, ids, orders, journey, specs, advanceClock, startedAt: Date.now() };
}

/**
 * Stops background work in the order that loses nothing: no new jobs, then each
 * module's close (aborting webhook attempts in flight, ending hung requests) so the
 * jobs still running finish at once, then waits for them. The store stays open.
 */
export async function stopServices(services: Services, modules: SandboxModule[]): Promise<void> {
  const jobsDone = services.scheduler.stop();
  for (const m of modules) await m.close?.();
  await jobsDone;
  services.store.commit();
}

/**
 * Starts a sandbox in this process and listens.
 *
 * @example
 * const sandbox = await createSandbox({ clock: 'manual', tokens: ['t1'], seed: '42' });
 * await fetch(`${sandbox.url}/v1/order`, { method: 'POST', headers: { authorization: 'Bearer t1' }, ... });
 * await sandbox.clock.advance(60_000);
 * await sandbox.close();
 */
export async function createSandbox(input: SandboxOptions = {}): Promise<Sandbox> {
  const services = await buildServices(input);
  const { options, scheduler, store, clock } = services;
  const modules = sandboxModules(services);
  const app = createApp(services, modules);
  for (const m of modules) await m.start?.();
  const server = await new Promise<Server>((resolve, reject) => {
    // express's app.listen takes no server options; the header limit needs node:http's own.
    const s = createServer({ maxHeaderSize: options.maxHeaderSize }, app);
    answerClientErrors(s, options.maxHeaderSize);
    s.once('error', reject);
    s.listen(options.port, options.host, () => resolve(s));
  }).catch(async (error: unknown) => {
    await stopServices(services, modules);
    await store.close();
    throw error;
  });
  void scheduler.runDue();
  const port = (server.address() as AddressInfo).port;
  const { data, clock: mode, speed, fsync, strict, retention, seed } = options;
  services.logger.info({ port, data, clock: mode, speed, fsync, strict, retention, seeded: seed !== undefined, clients: services.registry.clients.length }, 'started');
  const shownHost = options.host.includes(':') ? `[${options.host}]` : options.host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shownHost}:${port}`,
    port,
    clients: services.registry.clients,
    app,
    services,
    modules,
    clock: {
      mode: clock.mode,
      now: () => clock.now(),
      advance: services.advanceClock,
    },
    close: () =>
      (closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const grace = setTimeout(() => server.closeAllConnections(), 10_000).unref();
        await stopServices(services, modules);
        await closed;
        clearTimeout(grace);
        await store.close();
      })()),
  };
}
