/** Which requests a fault rule applies to; every criterion given must hold. */
export interface FaultMatch {
  /** HTTP method, any case. */
  method?: string;
  /** A glob on the request path: `*` within one segment, `**` across segments, e.g. `/v1/order/tracking/*`. */
  path?: string;
  operation_id?: string;
  /** Header name (any case) → exact value. */
  headers?: Record<string, string>;
  /** Body field path (`items[0].cod`) → JSON value it must equal. */
  body?: Record<string, unknown>;
}

/** What a fault rule does to a matching request. */
export type FaultAction =
  | { type: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  | { type: 'latency'; ms: number; max_ms?: number }
  | { type: 'reset'; after_ms?: number }
  | { type: 'hang' }
  | { type: 'dribble'; bytes_per_second: number; interval_ms?: number };

/** What a client sends to create a rule (`POST /__sandbox/faults`). */
export interface FaultRuleInput {
  match?: FaultMatch;
  action: FaultAction;
  /** How many matching requests it applies to before it expires. Default 1. */
  times?: number;
  /** Chance (0-1] that it applies to a matching request. Default 1. */
  probability?: number;
}

/** A rule as the sandbox keeps and shows it. */
export interface FaultRule {
  id: string;
  match: FaultMatch;
  action: FaultAction;
  times: number;
  remaining: number;
  probability: number;
  /** Matching requests seen (whether the draw applied the rule or not). */
  matched: number;
  /** Requests it was applied to. */
  hits: number;
  created_at: string;
}
