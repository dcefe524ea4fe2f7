import type { ClientClock } from './clock.js';
import type { ChaosMode } from './delivery.js';
import type { FaultRule } from './fault-rule.js';

/** A client's webhook endpoint as set through the control API (or disabled by a 410). */
export interface EndpointSetting {
  url?: string;
  secret?: string;
  chaos?: ChaosMode[];
  disabled_at: number | null;
  disabled_reason: string | null;
  updated_at: number;
}

/** What the sandbox keeps per client besides its orders and deliveries. */
export interface ClientSettings {
  client_id: string;
  /** Set at run time; null when only the configuration applies. */
  webhook: EndpointSetting | null;
  /** Generated once when no secret is configured; a reset keeps it. */
  generated_secret: string | null;
  /** Fault rules, in the order they apply. */
  faults: FaultRule[];
  /** The number of the client's last fault rule (ids are per client). */
  fault_seq: number;
  /** The client's own clock; absent until it first moves apart from the sandbox's (an advance). */
  clock?: ClientClock;
}
