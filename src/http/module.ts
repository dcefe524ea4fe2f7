import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';
import type { ResetPart } from './handlers/index.js';
import type { HandlerMap, Interceptor } from './handler.js';
import type { ServedRequest } from './response-notes.js';

/**
 * A part of the sandbox that plugs into the app: handlers by operationId,
 * interceptors around requests, what it removes on a client reset, plain routes,
 * and what it must do on shutdown. See modules.ts for the list.
 */
export interface SandboxModule {
  name: string;
  handlers?: HandlerMap;
  /** Around every provider operation (faults, Prefer, journal). */
  providerInterceptors?: Interceptor[];
  /** Around every control operation. */
  controlInterceptors?: Interceptor[];
  /** Told of every provider request once its connection closes (the request journal). */
  observeProvider?: (served: ServedRequest) => void;
  /**
   * Shown every provider request just before it is answered; may hold the answer until a
   * promise it returns settles (never rejecting): the readiness report stores there what
   * the client's next request is judged against.
   */
  observeAnswer?: (served: ServedRequest) => Promise<void> | undefined;
  /** Told of every request of either spec once its connection closes (metrics). */
  observeRequests?: (served: ServedRequest) => void;
  /** Removes the client's records of this module; returns how many. */
  reset?: ResetPart;
  /** Plain express routes for paths neither spec has (e.g. the docs page), mounted after the specs. */
  routes?: (app: Express) => void;
  /**
   * Retention (`--retention`): removes this module's records older than `olderThan`
   * (epoch ms of the sandbox clock, or of the client's given), e.g. deliveries and
   * journal entries, of every client or of the one given; returns how many. Orders
   * themselves are removed by the retention module.
   */
  prune?: (olderThan: number, clientId?: string) => Promise<number>;
  /**
   * Removes this module's records of orders removed by number (a provider state's
   * teardown, retention by count: the orders themselves are gone), e.g. their webhook
   * deliveries; returns how many.
   */
  ordersRemoved?: (clientId: string, orderNos: readonly string[]) => Promise<number>;
  /**
   * Takes an HTTP upgrade request of the node server (the listen WebSocket); false when it
   * is not this module's. Only a listening sandbox has upgrades (createApp alone has none).
   */
  upgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean;
  /** Runs once the sandbox listens (or the test app is built). */
  start?: () => void | Promise<void>;
  /**
   * Runs as a listening sandbox begins to stop (it takes no more requests): lets go at
   * once what would hold the stop on a client's behalf (a hung request, a dribbled answer).
   * `close` follows once the jobs in flight end, or their time is up (see stopServices).
   * An app served without `createSandbox` (a test's supertest) is stopped by `close` alone.
   */
  stopping?: () => void;
  /** Runs on shutdown, before the store closes. */
  close?: () => void | Promise<void>;
}
