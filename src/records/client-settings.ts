import type { ClientClock } from './clock.js';
import type { ChaosMode } from './delivery.js';
import type { SandboxEventType } from './event.js';
import type { FaultRule } from './fault-rule.js';

/** The id of the endpoint every client has: the one `PUT /__sandbox/webhook`, the config file and `--webhook-url` set. */
export const DEFAULT_ENDPOINT = 'default';
/** A listener's name (`listen --name`, the endpoint it makes): 1 to 64 of A-Z, a-z, 0-9, `.`, `_`, `@` and `-`. */
export const LISTENER_NAME = /^[A-Za-z0-9._@-]{1,64}$/;
/** How a listener's endpoint is named where endpoint ids are (its attempts' target, the deliveries list): `listener:NAME`. */
export const LISTENER_PREFIX = 'listener:';
/** The target a listener's attempts show in the delivery log. */
export const listenerTarget = (name: string): string => `${LISTENER_PREFIX}${name}`;
/** A listener's name written bare or as its target (`laptop` or `listener:laptop`), bare. */
export const bareListenerName = (value: string): string => (value.startsWith(LISTENER_PREFIX) ? value.slice(LISTENER_PREFIX.length) : value);

/**
 * The events an endpoint takes: null for every event, else only those listed (Svix's
 * `filterTypes`). The test ping is not an event: it goes to the endpoint it is sent to.
 */
export type EventFilter = SandboxEventType[] | null;

/** A client's default webhook endpoint as set through the control API (or disabled by a 410, or through the API). */
export interface EndpointSetting {
  url?: string;
  secret?: string;
  chaos?: ChaosMode[];
  /** Absent in data written before endpoints had filters: every event. */
  events?: EventFilter;
  description?: string;
  disabled_at: number | null;
  disabled_reason: string | null;
  updated_at: number;
}

/**
 * Where an endpoint's deliveries go: a URL the sandbox POSTs to, or a listener, a named
 * `listen` session of the client that forwards each attempt from the partner's machine.
 */
export type EndpointTarget = { type: 'url'; url: string } | { type: 'listener'; name: string };

/** An endpoint of a client besides its default one, created through the control API. */
export interface ExtraEndpoint {
  /** `ep_` and a random part; never `default`. */
  id: string;
  target: EndpointTarget;
  /** The Standard Webhooks secret its deliveries are signed with. */
  secret: string;
  events: EventFilter;
  description: string;
  /** Set when disabled (through the API, or by a 410 Gone); null while it takes deliveries. */
  disabled_at: number | null;
  disabled_reason: string | null;
  created_at: number;
  updated_at: number;
  /** A listener's: when it was last seen connected (its client's clock); absent on a URL endpoint. */
  last_seen_at?: number | null;
}

/** What the sandbox keeps per client besides its orders and deliveries. */
export interface ClientSettings {
  client_id: string;
  /** Set at run time; null when only the configuration applies. */
  webhook: EndpointSetting | null;
  /** The client's other endpoints, in the order they were created; absent in data written before there were any. */
  endpoints?: ExtraEndpoint[];
  /** Generated once when no secret is configured; a reset keeps it. */
  generated_secret: string | null;
  /** Fault rules, in the order they apply. */
  faults: FaultRule[];
  /** The number of the client's last fault rule (ids are per client). */
  fault_seq: number;
  /** The client's own clock; absent until it first moves apart from the sandbox's (an advance). */
  clock?: ClientClock;
  /**
   * The listener endpoints the client's last reset removed: a replica holding one of their
   * sessions tells it the client was reset (it connects again), not that its endpoint was
   * deleted (it ends). Absent before any reset removed one.
   */
  reset_listeners?: string[];
}
