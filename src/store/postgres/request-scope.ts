import { AsyncLocalStorage } from 'node:async_hooks';
import type { RequestScope } from '../port.js';
import type { Order } from '../../records/index.js';
import type { Prefetched } from './settings.js';

/** An order read along with a request's clock: its row, or null when the request's client has no order of that AWB. */
export type PreReadOrder = { data: Order; version: number } | null;

/** What a request's first clock read reads along: its client's settings, and the order the request said it reads, if any. */
export interface PreRead {
  settings: Prefetched;
  awb?: string;
}

/** How long an order read with a request's clock may stand for its handler's read (ms). */
const FRESH_MS = 50;

/** The gate's lane of a request whose client is not known (yet, or ever: health checks). */
const UNKNOWN_LANE = '(unknown)';
/** The gate's lane of work on the requests' pool outside any request (start-up, clock reads of the replica's own). */
export const REPLICA_LANE = '(replica)';

/**
 * The request being served: `armed` until its first clock read of one client, which reads
 * that client's settings too; `settings` until its handler starts or it ends, whichever is
 * first; `lane` once its client is known.
 */
interface RequestState {
  armed: boolean;
  settings: Prefetched | undefined;
  lane: string | undefined;
  /** The AWB of the order the request said it reads (see RequestScope.readsOrder), until its clock read. */
  awb?: string;
  /** That order of the client as the clock read found it (at `at`, performance.now()), until the handler takes it or the request ends. */
  order?: { awb: string; clientId: string; row: PreReadOrder; at: number };
  /** Throws once the request's client has gone (see RequestScope.run). */
  stillWanted?: () => void;
}

/**
 * The adapter's side of the port's request scope. In a request's scope its clock read and
 * its settings read (the fault rules, before the handler) are one statement, not two
 * round trips, and its statements wait for a connection in its client's lane of the gate.
 */
export class RequestScopes {
  /** The request running now, if any. */
  readonly current = new AsyncLocalStorage<RequestState>();

  /** The scope as the port hands it to the request pipeline. */
  readonly scope: RequestScope = {
    run: (fn, stillWanted) => this.current.run({ armed: true, settings: undefined, lane: undefined, stillWanted }, fn),
    endPreRead: (ended = false) => {
      const scope = this.current.getStore();
      if (!scope) return;
      scope.armed = false;
      scope.settings = undefined;
      // Work the request leaves running (the readiness report's judging) must not take its order, nor be cut short by its client's hang-up.
      if (ended) {
        scope.order = undefined;
        scope.stillWanted = undefined;
      }
    },
    readsOrder: (awb) => {
      const scope = this.current.getStore();
      if (scope?.armed) scope.awb = awb;
    },
    client: (lane) => {
      const scope = this.current.getStore();
      if (scope) scope.lane = lane;
    },
  };

  /** The settings the current request read along with its clock, if any. */
  readonly prefetched = (): Prefetched | undefined => this.current.getStore()?.settings;

  /** Where the current request's first clock read puts its client's settings (none after the first: see PgClocks.read). */
  readonly arm = (): PreRead | undefined => {
    const scope = this.current.getStore();
    if (!scope?.armed) return undefined;
    scope.armed = false;
    return { settings: (scope.settings = new Map()), ...(scope.awb === undefined ? {} : { awb: scope.awb }) };
  };

  /** Keeps the client's order the clock read found for the request's handler. */
  readonly keepOrder = (awb: string, clientId: string, row: PreReadOrder): void => {
    const scope = this.current.getStore();
    if (scope) scope.order = { awb, clientId, row, at: performance.now() };
  };

  /**
   * The client's order with this AWB as the current request's clock read found it (once), or
   * undefined when it was not read so or was read more than FRESH_MS ago: a request that
   * waited (a latency fault rule, a long turn behind other requests) answers from the order
   * as it is when it is served, as the provider would.
   */
  readonly preReadOrder = (awb: string, clientId: string): PreReadOrder | undefined => {
    const scope = this.current.getStore();
    const kept = scope?.order;
    if (kept?.awb !== awb || kept.clientId !== clientId) return undefined;
    scope!.order = undefined;
    return performance.now() - kept.at <= FRESH_MS ? kept.row : undefined;
  };

  /** Throws when the request running now has lost its client (nothing to throw outside a request). */
  readonly stillWanted = (): void => this.current.getStore()?.stillWanted?.();

  /** The gate's lane of the work running now on the requests' pool (see Connections.gate). */
  get lane(): string {
    const scope = this.current.getStore();
    return scope ? (scope.lane ?? UNKNOWN_LANE) : REPLICA_LANE;
  }
}
