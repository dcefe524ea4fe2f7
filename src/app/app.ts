import express, { type Express } from 'express';
import { callerOn, cors, errorEnvelope, FairTurns, hostRequired, jsonBody, largeBodiesFor, mountSpec, requestLog, routedHandlers, series, specAnswer, unknownPath, type SandboxModule } from '../http/index.js';
import { controlModule, ordersModule } from './modules/index.js';
import type { Services } from './services.js';

/**
 * The express app of the sandbox, built from its services: both specs mounted, each
 * operation served by the module the route table names (orders and control always,
 * the others as `modules` plug them in), every error as the envelope. It does not
 * listen; `createSandbox` does, and tests drive it with supertest.
 */
export function createApp(services: Services, modules: SandboxModule[] = []): Express {
  const handlers = routedHandlers([ordersModule(services), controlModule(services, modules), ...modules]);
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  const { admit } = services;
  // Past the rate limit (when there is one), each client's requests wait for their turn among the others'.
  const fairTurns = new FairTurns(undefined, undefined, (waitedMs) => services.metrics.turnWait.observe(waitedMs / 1000));
  const turn = fairTurns.turn.bind(fairTurns);
  const charge = fairTurns.charge.bind(fairTurns);
  const everyRequest = modules.flatMap((m) => (m.observeRequests ? [m.observeRequests] : []));
  // Journal ids count each client's own requests: nothing shows another client's activity.
  const arrivals = new Map<string, number>();
  const arrival = (clientId: string): number => {
    const n = (arrivals.get(clientId) ?? 0) + 1;
    arrivals.set(clientId, n);
    return n;
  };
  // Large bodies are parsed and validated on a worker thread before their turn (see LargeBodies).
  const largeBodies = largeBodiesFor({ provider: services.specs.provider.document, control: services.specs.control.document }, (why) => services.logger.warn(why));
  const onObserverError = (error: unknown): void => services.logger.error({ err: error }, 'a request observer failed (journal, report or metrics); the request was answered');
  const control = mountSpec(services.specs.control, {
    admit,
    turn,
    charge,
    registry: services.registry,
    interceptors: modules.flatMap((m) => m.controlInterceptors ?? []),
    largeBodies: (lane, operationId, raw) => largeBodies.check(lane, 'control', operationId, raw),
    handlers: handlers.control,
    fallback: specAnswer(services.specs.control.document, services.options.seed),
    observers: everyRequest,
    onObserverError,
    now: (clientId) => services.clock.of(clientId ?? ''),
    refreshClock: services.clockService.refresh,
    scope: services.storage.requestScope,
  });
  const provider = mountSpec(services.specs.provider, {
    admit,
    turn,
    charge,
    registry: services.registry,
    interceptors: modules.flatMap((m) => m.providerInterceptors ?? []),
    largeBodies: (lane, operationId, raw) => largeBodies.check(lane, 'provider', operationId, raw),
    handlers: handlers.provider,
    exactPaths: true,
    fallback: specAnswer(services.specs.provider.document, services.options.seed),
    observers: [...modules.flatMap((m) => (m.observeProvider ? [m.observeProvider] : [])), ...everyRequest],
    answering: answeringOf(modules),
    onObserverError,
    now: (clientId) => services.clock.of(clientId ?? ''),
    refreshClock: services.clockService.refresh,
    scope: services.storage.requestScope,
    arrival,
  });
  // One layer of express's router for the whole edge: log, Host, CORS, body, then the specs
  // (every control path starts with /__sandbox/: provider requests skip its routes).
  app.use(
    series(requestLog(services.logger, (clientId) => (clientId === undefined ? services.registry.everyToken() : services.registry.secretsOf(clientId, 'admin'))), hostRequired, cors(services.options.corsOrigins), jsonBody(services.options.bodyLimit, (req) => callerOn(req.socket, services.registry, req.headers.authorization)), (req, res, next) =>
      req.path.startsWith('/__sandbox/') ? control(req, res, next) : provider(req, res, next),
    ),
  );
  // Paths neither spec has: the modules' own pages (dashboard, docs), then 404.
  for (const m of modules) m.routes?.(app);
  app.use(unknownPath);
  app.use(errorEnvelope(services.options.bodyLimit));
  return app;
}

/** What the modules that look at an answer before it goes out (`observeAnswer`) are shown, as one: the answer waits for all of them. */
function answeringOf(modules: SandboxModule[]): ((served: Parameters<NonNullable<SandboxModule['observeAnswer']>>[0]) => Promise<void> | undefined) | undefined {
  const looking = modules.flatMap((m) => (m.observeAnswer ? [m.observeAnswer] : []));
  if (looking.length === 0) return undefined;
  if (looking.length === 1) return looking[0];
  return (served) => {
    const waits = looking.flatMap((look) => look(served) ?? []);
    return waits.length > 0 ? Promise.all(waits).then(() => undefined) : undefined;
  };
}
