import type { Logger } from 'pino';
import type { Clocks, ClockService } from '../clock/index.js';
import type { Scheduler } from '../jobs/index.js';
import type { ClientRegistry } from '../clients/index.js';
import type { ResolvedOptions } from '../config/index.js';
import type { EventBus } from '../events/index.js';
import type { Fixtures } from '../fixtures/index.js';
import type { IdFactory } from '../ids/index.js';
import type { OrdersService } from '../orders/index.js';
import type { CompiledSpec } from '../spec/index.js';
import type { SettingsWriter, Storage } from '../store/index.js';
import type { SandboxMetrics } from '../metrics/index.js';
import type { Journey, TrackingAnswers } from '../tracking/index.js';
import type { WebhookEndpoints, TargetGuard } from '../webhooks/index.js';

/**
 * What the sandbox is composed of: `sandbox.ts` builds it, and only the composition
 * (app.ts, modules.ts) sees all of it; each module and service is handed the few
 * parts it uses (`Pick<Services, ...>`).
 */
export interface Services {
  options: ResolvedOptions;
  logger: Logger;
  storage: Storage;
  fixtures: Fixtures;
  /** The sandbox's clock and each client's (`clock.of(clientId)`): a client's times are on its own clock. */
  clock: Clocks;
  /** Advances of the clocks (one client's, or all) and their state, kept in the store. */
  clockService: ClockService;
  scheduler: Scheduler;
  /** Order events (awb.generated, ...); the webhook outbox subscribes. */
  events: EventBus;
  registry: ClientRegistry;
  ids: IdFactory;
  orders: OrdersService;
  journey: Journey;
  /** The tracking answers and their caches (see TrackingAnswers). */
  tracking: TrackingAnswers;
  endpoints: WebhookEndpoints;
  /** Each client's rate limit (`--rate-limit`), one budget for its API requests and its listen openings; undefined without a limit. */
  admit: ((clientId: string) => Promise<void>) | undefined;
  /** The one way to write a client's settings row (endpoint, secret, fault rules, clock): one unit of a client at a time, tried again on a Conflict. */
  settings: SettingsWriter;
  /** The webhook target policy (`--webhook-targets`): checks URLs set through the API, on setting and on connect. */
  webhookTargets: TargetGuard;
  /** The counters behind `GET /__sandbox/metrics`, on this sandbox's own registry. */
  metrics: SandboxMetrics;
  specs: { provider: CompiledSpec; control: CompiledSpec };
  /** Moves every client's clock (and, on a manual clock, the sandbox's) on, runs what falls due, and remembers the times in the store. */
  advanceClock(ms: number): Promise<void>;
  startedAt: number;
}
