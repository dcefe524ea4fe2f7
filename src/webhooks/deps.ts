import type { Logger } from 'pino';
import type { Clocks } from '../clock/index.js';
import type { ClientRegistry } from '../clients/index.js';
import type { Attempt, Delivery } from '../records/index.js';
import type { SettingsWriter, Storage } from '../store/index.js';
import type { WebhookEndpoints } from './endpoints.js';
import type { TargetGuard } from './target-guard.js';
import type { ListenerRelay } from './relay.js';

/** What the webhook dispatcher works with. */
export interface DispatcherDeps {
  storage: Storage;
  clock: Clocks;
  registry: ClientRegistry;
  endpoints: WebhookEndpoints;
  /** Runs the unit that records a 410 Gone, which disables the endpoint in the client's settings. */
  settings: SettingsWriter;
  /** Delay of each scheduled attempt (see retry.ts). */
  retries: number[];
  timeoutMs: number;
  /**
   * How long after an attempt its outcome may still be recorded when the store cannot
   * take it at once (every connection busy, a short outage): it is tried again until then,
   * within the job's claim, so no other replica makes the attempt again meanwhile.
   * Default 0: not tried again (the job is given back, and the attempt made again).
   */
  recordWithinMs?: number;
  /** Most deliveries held per client for want of a URL or a live endpoint (`--outbox-size`). */
  outboxSize: number;
  /** Makes delivery ids (the `webhook-id`) reproducible. */
  seed: string;
  logger: Logger;
  /** Wall-clock time for throttling warnings (tests pass their own). Default Date.now. */
  wallNow?: () => number;
  /** The webhook target policy: URLs set through the API are checked on connect; configured ones are trusted. */
  guard: TargetGuard;
  /** Reaches listener endpoints (`listen` sessions); without it their deliveries are held. */
  relay?: ListenerRelay;
  /** Told of every attempt made, once it has an outcome (metrics). */
  onAttempt?: (attempt: Attempt) => void;
  /** Told of each attempt once it has an outcome, with its delivery as it stood before (the readiness report). */
  observer?: AttemptObserver;
}

/** Watches attempts as they are made; `delivery.attempts` holds the earlier attempts only. */
export interface AttemptObserver {
  made(delivery: Delivery, attempt: Attempt): void;
  /** A scheduled attempt that reached the receiver and failed the delivery for good: its last retry, or a 410 (`delivery` as it ended, that attempt last). */
  gaveUp?(delivery: Delivery, attempt: Attempt): void;
}
