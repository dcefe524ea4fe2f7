import type { ClientRegistry } from '../../clients/index.js';
import type { RequestScope } from '../../store/index.js';
import type { Interceptor } from '../handler.js';
import type { BodyVerdict } from '../large-bodies.js';
import type { ServedRequest } from '../response-notes.js';

/** What the pipeline of a mounted spec is given: the registry, the stages' services and the observers. */
export interface PipelineOptions {
  registry: ClientRegistry;
  interceptors: Interceptor[];
  /** Told of every request once its connection closes (the request journal). */
  observers?: Array<(served: ServedRequest) => void>;
  /**
   * Shown each request just before it is answered (its status; null: none goes out); a
   * promise it returns holds the answer until it settles, and never rejects (see
   * `beforeAnswer`). The readiness report writes there the marks a client's next request
   * is judged against.
   */
  answering?: (served: ServedRequest) => Promise<void> | undefined;
  /** Told when an observer throws: the request has been answered, and the process must not go down with it. */
  onObserverError?: (error: unknown) => void;
  /** The time on the client's clock (the sandbox's before the client is known), for `arrivedAt`. */
  now: (clientId?: string) => number;
  /**
   * Brings the client's clock ('' : the sandbox's, for an admin acting for none) up to
   * what a shared store keeps, before the request is served (absent: the clocks are this
   * process's own).
   */
  refreshClock?: (clientId: string) => Promise<void>;
  /** Numbers an authenticated request of the client, in arrival order (ids of its journal entries are per client). */
  arrival?: (clientId: string) => number;
  /** Runs each request in the store's request scope (see `Storage.requestScope`), told its lane (see `turn`) once its client is known. */
  scope?: RequestScope;
  /** Called with the client id of each authenticated request (the admin lane, ADMIN_LANE, for an admin) before it is validated; rejects to refuse it (the rate limit). */
  admit?: (clientId: string) => Promise<void>;
  /**
   * Resolves when it is an authenticated request's turn to be served (see FairTurns),
   * after `admit` and once its arrival is stamped; `lane` is the client's id, or
   * the admin lane for every admin request. Rejects to refuse it (too many waiting).
   */
  turn?: (lane: string, options?: { capped?: boolean; bytes?: number }) => Promise<void>;
  /** Checks a large JSON body of a request of `lane` off the event loop (LargeBodies.check); absent: every body is parsed in its turn. */
  largeBodies?: (lane: string, operationId: string, raw: Buffer) => Promise<BodyVerdict | undefined>;
  /** Told the loop time (ms) an authenticated request's observers took once it closed, outside its turn (see FairTurns.charge). */
  charge?: (lane: string, ms: number) => void;
}
