import { randomBytes } from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { answerWithoutUpgrade, isWebSocket } from './upgrade.js';
import { endedStart, stopServices } from './stop.js';
import { inProcessClock, type SandboxClock } from './in-process-clock.js';
import { closeAfterAnswer, drainConnections, keepOpenFor, notePipelined, noteUpgraded, openConnections } from './connections.js';
import { compareClients, configuredClients, defaultLeftOut, generatedTokenGiven } from './clients-config.js';
import { compareClockMode } from './clock-mode.js';

export { STOP_RECORD_MARGIN_MS, stopServices } from './stop.js';
import type { Express } from 'express';
import { pino } from 'pino';
import { createApp } from './app.js';
import { sandboxModules } from './modules.js';
import { Scheduler } from '../jobs/index.js';
import { ClockService, clockStartPassed, loadClocks, ClockSync } from '../clock/index.js';
import { SettingsWriter, closeRefusedStart, openStorage } from '../store/index.js';
import { answerClientErrors, capConnections, clientRateLimit, continueWhenRead, withEnvelope, ApiError, messages, type SandboxModule } from '../http/index.js';
import { ClientRegistry, roleOf, type Client, type ClientConfig } from '../clients/index.js';
import { checkClientConfigs, listenFailure, openTargetsShared, OptionError, resolveOptions, shownDatabase, shownRetention, type ResolvedOptions, type SandboxOptions } from '../config/index.js';
import { EventBus } from '../events/index.js';
import { SandboxMetrics } from '../metrics/index.js';
import { loadFixtures } from '../fixtures/index.js';
import { hash32, IdFactory } from '../ids/index.js';
import { createFields, OrdersService, scenarioChanges } from '../orders/index.js';
import type { Services } from './services.js';
import { compiledSpecs } from '../spec/index.js';
import type { Storage, StoreFileSystem } from '../store/index.js';
import { WebhookEndpoints, scheduleStoredAttempts, TargetGuard, type Resolve } from '../webhooks/index.js';
import { Journey, TrackingAnswers } from '../tracking/index.js';
import { schedulerOptions } from './scheduler-options.js';

/** Log lines are written in batches of about this many bytes... */
const LOG_BATCH_BYTES = 4096;
/** ...or this long after the first of them, whichever comes first. */
const LOG_FLUSH_MS = 100;

/** Log fields censored by pino, wherever they appear up to two levels down. */
export const LOG_REDACTIONS = [
  'req.headers.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'token',
  '*.token',
  'tokens',
  '*.tokens',
  'adminTokens',
  'secret',
  '*.secret',
  '*.*.secret',
  'webhookSecret',
] as const;

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

/** With no client configured: one default client whose token is kept in the store (printed at start). */
export async function defaultClient(options: ResolvedOptions, storage: Storage): Promise<ClientConfig> {
  let token = await storage.meta.get('default_token');
  if (!token) {
    const made = options.seed !== undefined ? `sbx_${hash32(`token:${options.seed}`).toString(16).padStart(8, '0')}` : `sbx_${randomBytes(12).toString('hex')}`;
    // Kept only if none is: replicas starting together on a fresh database all take the first one's.
    // An empty one (a hand-edited data file) is replaced.
    token = await storage.meta.setIfAbsent('default_token', made);
    if (!token) await storage.meta.set('default_token', (token = made));
  }
  return { token, id: 'default', name: 'default' };
}

/** The seed of the data file: the one given, else the one kept, else a new one (kept). */
async function dataSeed(seed: string | undefined, storage: Storage): Promise<string> {
  const kept = await storage.meta.setIfAbsent('seed', seed ?? randomBytes(8).toString('hex'));
  return seed ?? kept;
}

/**
 * Data files of schema 1 kept due times only in their records: turn them into jobs
 * once (an upgrade costs one pass over the records; every later start does not).
 */
async function migrateDueTimes(storage: Storage, journey: Journey, clients: ClientRegistry): Promise<void> {
  if ((await storage.meta.get('jobs_migrated')) !== undefined) return;
  const orders = await storage.orders.createdBefore(Infinity, Number.MAX_SAFE_INTEGER);
  await storage.transaction(async (tx) => {
    for (const order of orders) await journey.schedule(tx, order);
  });
  await scheduleStoredAttempts(storage, clients.clients.map((client) => client.id));
  await storage.meta.set('jobs_migrated', Date.now());
}

/** What tests may swap in below the options. */
export interface BuildSeams {
  /** The file operations the embedded store writes through (tests inject ENOSPC here). Default node:fs. */
  storeFileSystem?: StoreFileSystem;
  /** How webhook hosts are resolved before the target policy checks their addresses. Default dns.lookup. */
  webhookLookup?: Resolve;
  /** The fixtures folder (scenarios, coverage, ...). Default the package's own. */
  fixturesDir?: string;
}

/**
 * Builds every service of the sandbox without listening: for tests that drive the
 * app with supertest. `signal` as createSandbox's.
 */
export async function buildServices(input: SandboxOptions = {}, seams: BuildSeams = {}, signal?: AbortSignal): Promise<Services> {
  const options = resolveOptions(input);
  // No log line carries a token or a webhook secret, at any level: request lines name the
  // client, never the token, and hold no headers or bodies. The paths below censor them
  // should an object that has them (headers, a client, a webhook setting) be logged anyway.
  // Written asynchronously: one line per request must not cost a blocking write(2) each.
  // Lines gather up to LOG_BATCH_BYTES (a write per line would cost each request a system
  // call) and are written at the latest LOG_FLUSH_MS later, and synchronously on exit.
  const destination = pino.destination({ dest: 1, sync: false, minLength: LOG_BATCH_BYTES });
  setInterval(() => destination.flush(), LOG_FLUSH_MS).unref();
  const logger = pino({ level: options.logLevel, base: undefined, redact: [...LOG_REDACTIONS] }, destination);
  const fixtures = loadFixtures(seams.fixturesDir);
  if (!fixtures.scenarios.has(options.scenario)) {
    throw new OptionError('scenario', `scenario "${options.scenario}" is not a scenario: use one of ${[...fixtures.scenarios.keys()].join(', ')}.`);
  }
  let specs: ReturnType<typeof compiledSpecs>;
  try {
    specs = compiledSpecs(options.providerSpec, options.maxItems, options);
  } catch (error) {
    throw new OptionError('providerSpec', `providerSpec ${options.providerSpec} cannot be served: ${(error as Error).message}`);
  }
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.unresolved.length > 0) logger.warn({ spec: name, unresolved: spec.unresolved }, `the ${name} spec has references that do not resolve: an operation that needs one answers 500 to every request`);
  }

  const configured = configuredClients(options);
  for (const warning of checkClientConfigs(configured, { scenarios: [...fixtures.scenarios.keys()], couriers: [...fixtures.couriers.keys()] }, options.config)) logger.warn(warning);
  const storage = await openStorage(options, logger, seams.storeFileSystem, signal).catch((error: unknown) => Promise.reject(endedStart(error, signal, logger)));
  // The start's first writes follow (the real clock's save among them): one the disk refuses ends the start as a refused open does.
  try {
    const podSecret = await storage.meta.setIfAbsent('pod_secret', randomBytes(32).toString('hex'));
    if (options.databaseUrl !== undefined) await compareClients(storage, configured, options.adminTokens, podSecret, logger).then(() => compareClockMode(storage, options.clock, options.speed, logger));
    // Admin tokens are not clients: with only those configured, the default client is made as well.
    const hasClient = configured.some((c) => roleOf(c) !== 'admin');
    const registry = new ClientRegistry(hasClient ? configured : [...configured, await defaultClient(options, storage)], options.adminTokens);
    const openTargets = openTargetsShared(options.webhookTargets, registry.clientIds.length, options.adminTokens.length);
    if (openTargets) logger.warn({ webhook_targets: 'any', clients: registry.clientIds.length }, openTargets);
    // The token the quick start printed, if this store ever made one: two warnings below look for it among this start's.
    const generated = await storage.meta.get('default_token');
    const given = hasClient ? generatedTokenGiven(generated, configured, registry.clients) : undefined;
    if (given) logger.warn(given);
    const leftOut = options.databaseUrl !== undefined ? undefined : await defaultLeftOut(storage, generated, registry.clients);
    if (leftOut) logger.warn(leftOut);
    for (const warning of await scenarioChanges(storage, fixtures, registry.clientIds)) logger.warn(warning);
    const clock = await loadClocks(storage, options, registry.clientIds);
    const passed = clockStartPassed(options, clock);
    if (passed) logger.info({ clock_start: new Date(options.clockStart!).toISOString(), clients: passed.clients, clients_total: passed.clients_total }, passed.message);
    // On a shared database the clocks live there: each request and wake-up reads them.
    const sync = storage.sharedClocks && new ClockSync(storage.sharedClocks, clock);
    const events = new EventBus();
    const metrics = new SandboxMetrics();
    events.subscribe(async (event) => metrics.event(event));
    const scheduler = new Scheduler(storage, clock, schedulerOptions(options, registry, logger, metrics, sync));
    const settings = new SettingsWriter(storage);
    const clockService = new ClockService(storage, settings, scheduler, clock, sync);
    clockService.keepRealClock();
    const ids = new IdFactory(await dataSeed(options.seed, storage));
    const journey = new Journey({ storage, fixtures, ids, clock, events, podSecret });
    journey.attach(scheduler);
    const orders = new OrdersService({ storage, fixtures, clock, ids, journey }, { defaultScenario: options.scenario, awbDelay: options.awbDelay, maxItems: options.maxItems, fields: createFields(specs.provider.document) });
    orders.whenCreated((_clientId, count) => metrics.ordersCreated.inc(count));
    const endpoints = new WebhookEndpoints(storage, settings, options);
    const webhookTargets = new TargetGuard(options.webhookTargets, seams.webhookLookup);
    await migrateDueTimes(storage, journey, registry);
    const advanceClock = (ms: number): Promise<void> => clockService.advanceAll(ms);
    const tracking = new TrackingAnswers(journey, fixtures, clock);
    const admit = clientRateLimit(options.rateLimit);
    return { options, logger, storage, fixtures, clock, clockService, scheduler, events, registry, ids, orders, journey, tracking, endpoints, admit, settings, webhookTargets, metrics, specs, advanceClock, startedAt: Date.now() };
  } catch (error) {
    throw await closeRefusedStart(storage, error);
  }
}

/**
 * How a start may be stopped before it is done: `signal`, aborted during the start (the CLI's SIGTERM), cuts short the wait for
 * the database or the journal's replay, closes what was opened (the lock given back), logs one line, and rejects with its reason.
 *
 * @example
 * const starting = new AbortController();
 * process.once('SIGTERM', () => starting.abort('SIGTERM'));
 * const sandbox = await createSandbox({ data: 'sandbox.json' }, { signal: starting.signal });
 */
export interface StartOptions {
  signal?: AbortSignal;
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
export async function createSandbox(input: SandboxOptions = {}, { signal }: StartOptions = {}): Promise<Sandbox> {
  const services = await buildServices(input, {}, signal);
  const { options, scheduler, storage } = services;
  const modules = sandboxModules(services);
  const app = createApp(services, modules);
  for (const m of modules) await m.start?.();
  let stopping = false;
  const server = await new Promise<Server>((resolve, reject) => {
    signal?.throwIfAborted();
    // express's app.listen takes no server options; the header limit needs node:http's own.
    const serve = withEnvelope(app);
    const handle = (req: IncomingMessage, res: ServerResponse): void => {
      notePipelined(req, res);
      if (!stopping) return serve(req, res);
      // Stopping: refused, so a client that keeps its connection busy cannot hold the stop past its grace.
      keepOpenFor(req, res);
      res.writeHead(503, { 'Content-Type': 'application/json; charset=utf-8', 'Retry-After': '1', Connection: 'close' });
      res.end(JSON.stringify(new ApiError(503, messages.stopping('requests')).toEnvelope()));
    };
    const s = createServer({ maxHeaderSize: options.maxHeaderSize, requireHostHeader: false, headersTimeout: 60_000, requestTimeout: 300_000 }, handle);
    answerClientErrors(s, options.maxHeaderSize, services.logger);
    capConnections(s, options.maxConnections, services.logger);
    continueWhenRead(s, handle);
    // Node hands every request with an Upgrade header here, and no longer watches the socket's errors.
    s.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      socket.on('error', () => socket.destroy());
      // A WebSocket a module takes (the listen sessions). A module that throws has taken nothing: the request is answered as any other.
      let taken = false;
      try {
        taken = !stopping && isWebSocket(req) && modules.some((m) => m.upgrade?.(req, socket, head));
      } catch (error) {
        services.logger.warn({ err: error }, 'upgrade request not taken');
      }
      if (taken) noteUpgraded(socket as Socket);
      else answerWithoutUpgrade(req, socket, handle);
    });
    s.once('error', (error) => reject(listenFailure(error)));
    s.listen(options.port, options.host, () => (signal?.aborted ? s.close(() => reject(signal.reason)) : resolve(s)));
  }).catch(async (error: unknown) => {
    await stopServices(services, modules);
    await storage.close();
    throw endedStart(error, signal, services.logger);
  });
  const connections = openConnections(server, services.logger);
  void scheduler.runDue().finally(() => void scheduler.arm());
  // The webhook client loads once the sandbox listens, not during the start (nor at the first attempt).
  const loadWebhookClient = setImmediate(() => services.webhookTargets.warmUp());
  const port = (server.address() as AddressInfo).port;
  const { data, databaseUrl, clock: mode, speed, fsync, strict, retention, retentionOrders, seed } = options;
  // Where the records are: the database (without its password) on PostgreSQL, where the data file and --fsync are not used.
  const store = databaseUrl !== undefined ? { database: shownDatabase(databaseUrl) } : { data, fsync };
  services.logger.info({ port, ...store, clock: mode, speed, strict, retention: shownRetention(retention), ...(retentionOrders > 0 ? { retention_orders: retentionOrders } : {}), seeded: seed !== undefined, clients: services.registry.clientIds.length }, 'started');
  const shownHost = options.host.includes(':') ? `[${options.host}]` : options.host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shownHost}:${port}`,
    port,
    clients: services.registry.clients,
    app,
    services,
    modules,
    clock: inProcessClock(services, () => closing !== undefined),
    close: () =>
      (closing ??= (async () => {
        stopping = true;
        for (const m of modules) m.stopping?.();
        closeAfterAnswer(connections);
        clearImmediate(loadWebhookClient);
        // Connections close as their answers end (see drainConnections).
        const closed = drainConnections(server, connections);
        await stopServices(services, modules);
        await closed;
        await storage.close();
        // Lines still gathering for a batch (the drain's attempts among them) are written before
        // the process exits, not lost with it; a stdout nobody reads holds the stop 1 s at most.
        await new Promise<void>((resolve) => {
          const bound = setTimeout(resolve, 1_000).unref();
          services.logger.flush(() => {
            clearTimeout(bound);
            resolve();
          });
        });
      })()),
  };
}
