import express, { type Express } from 'express';
import { controlHandlers, type ResetPart } from './control/handlers.js';
import { errorEnvelope, jsonBody, requestLog, unknownPath } from './http/edge.js';
import type { HandlerMap, Interceptor } from './http/handler.js';
import { mountSpec } from './http/mount.js';
import { orderHandlers } from './orders/handlers.js';
import type { Services } from './services.js';
import { specAnswer } from './spec/mock.js';

/** What other parts of the sandbox add to the app. */
export interface AppExtensions {
  handlers?: HandlerMap;
  /** Around every provider operation (faults, Prefer, journal). */
  providerInterceptors?: Interceptor[];
  /** Around every control operation. */
  controlInterceptors?: Interceptor[];
  resetParts?: Record<string, ResetPart>;
  /** Plain express routes (docs page) mounted before the specs. */
  routes?: (app: Express) => void;
}

/**
 * The express app of the sandbox, built from its services: both specs mounted with
 * their handlers, every error as the envelope. It does not listen; `createSandbox`
 * does, and tests drive it with supertest.
 */
export function createApp(services: Services, extensions: AppExtensions = {}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(requestLog(services.logger));
  app.use(jsonBody(services.options.bodyLimit));
  extensions.routes?.(app);
  app.use(
    mountSpec(services.specs.control, {
      registry: services.registry,
      interceptors: extensions.controlInterceptors ?? [],
      handlers: { ...controlHandlers(services, extensions.resetParts), ...extensions.handlers },
      fallback: specAnswer(services.specs.control.document),
    }),
  );
  app.use(
    mountSpec(services.specs.provider, {
      registry: services.registry,
      interceptors: extensions.providerInterceptors ?? [],
      handlers: { ...orderHandlers(services), ...extensions.handlers },
      fallback: specAnswer(services.specs.provider.document),
    }),
  );
  app.use(unknownPath);
  app.use(errorEnvelope(services.options.bodyLimit));
  return app;
}
