import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type RawData } from 'ws';
import type { ClientRegistry } from '../clients/index.js';
import { listenRequest, type ListenerRelay, type Listeners, type RelayedAttempt, type RelayResult } from '../webhooks/index.js';
import { authenticate, sandboxHeaders, soleAuthorization } from './auth.js';
import { checkEndpoint, checkNotSuperseded, CLOSE, CONTROL_FRAMES_PER_PING, Connection, keyOf, sessionOf, LISTEN_ANSWER_MARGIN_MS, refuse, targetOf, type Asked, type Signal, CLOSE_GRACE_MS, HANDOFF_CUT, HANDOFF_TAKEN_MS, HANDOFF_TAKE_WITHIN_MS, LISTEN_CHANNEL, LISTEN_PING_MS, LISTEN_RESUME_MS, LISTEN_SEEN_MS, MAX_LISTEN_MESSAGE, WHO_MS, LISTEN_PATH } from './listen-protocol.js';
import { checkHandshake } from './listen-handshake.js';
import { ApiError, messages, toApiError } from './errors.js';
import { authorize } from './roles.js';
import { backgroundFailures, sharedAbortController, within } from '../shared/index.js';
import type { Signals } from '../store/index.js';

/** What the listen server works with: who may listen, its log, and on PostgreSQL the other replicas. */
export interface ListenServerDeps {
  registry: ClientRegistry;
  logger: Logger;
  /** Messages between replicas (PostgreSQL): an attempt for a listener held elsewhere is handed over. */
  signals?: Signals;
  /** A delivery's body, read from the store by the replica holding the listener (a hand-off carries ids only). */
  bodyOf?: (deliveryId: string) => Promise<string | undefined>;
  /** Admits a client's listen open before any work (a cap of opens a second, `--rate-limit`): throws a 429 past it. */
  admit?: (clientId: string) => Promise<void>;
}

/**
 * The server side of `shipping-sandbox listen` (see docs/decisions/0009-listen.md): a
 * WebSocket per listener, opened by an upgrade of `GET /__sandbox/listen` that the roles
 * table treats as a write. It is the webhooks feature's ListenerRelay: an attempt to a
 * listener connected here goes out as an `attempt` message and its `result` comes back
 * as the receiver's answer.
 */
export class ListenServer implements ListenerRelay {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_LISTEN_MESSAGE });
  private readonly held = new Map<string, Connection>();
  private listeners: Listeners | undefined;
  private closed = false;
  /** This process among the replicas. */
  private readonly replica = randomBytes(6).toString('hex');
  /** Hand-offs and questions this replica is waiting on, by request id. */
  private readonly asked = new Map<string, Asked>();
  /** Ends the attempts this replica makes for others at shutdown. */
  private readonly stopping = sharedAbortController();
  /** False once the stop begins (drain or close): other replicas' hand-offs are no longer taken. */
  private taking = true;
  /** The hand-offs taken from other replicas and not yet answered, with the longest wait among them. */
  private readonly inHand = new Map<Promise<void>, number>();
  /** Logs a failed look at a listener: while the store is away, warnings without a stack that count them (see backgroundFailures). */
  private readonly failed: ReturnType<typeof backgroundFailures>;
  private readonly handOffFailed = (err: unknown): void => this.failed('listener hand-off', err, 'the replica that asked holds the delivery for the listener, or counts the attempt as timed out');

  constructor(private readonly deps: ListenServerDeps) {
    this.failed = backgroundFailures(deps.logger);
  }

  /** The webhooks feature's side, once it is built (it needs this relay first). */
  bind(listeners: Listeners): void {
    this.listeners = listeners;
  }

  /** Starts taking other replicas' hand-offs (PostgreSQL). */
  async start(): Promise<void> {
    await this.deps.signals?.subscribe(LISTEN_CHANNEL, (payload) => void this.signalled(payload).catch(this.handOffFailed));
  }

  /** Takes an upgrade request of the node server; false when it is not a listen request (someone else's, or a 404). A refusal is logged as the request log logs any answer. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    socket.on('error', () => socket.destroy());
    const url = targetOf(req);
    if (!(url instanceof ApiError) && url.pathname !== LISTEN_PATH) return false;
    const seen: { client?: string; started: bigint } = { started: process.hrtime.bigint() };
    if (url instanceof ApiError) refuse(socket, url);
    else void this.open(req, socket, head, url, seen).catch((error: unknown) => {
      const api = toApiError(error);
      const line = { method: req.method, path: LISTEN_PATH, status: api.status, ms: Number(process.hrtime.bigint() - seen.started) / 1e6, client: seen.client };
      if (api.status >= 500) this.deps.logger.error({ ...line, err: error }, 'listen request failed');
      else this.deps.logger.info(line, 'request');
      refuse(socket, api);
    });
    return true;
  }

  /** Opens a listen session, or throws why not; `seen` names the client for the refusal's log line once the token is known. */
  private async open(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, seen: { client?: string }): Promise<void> {
    const listeners = this.listeners;
    if (this.closed || !listeners) throw new ApiError(503, messages.stopping('listeners'), [], { 'Retry-After': '1' });
    const { registry } = this.deps;
    const caller = authenticate(registry, soleAuthorization(req));
    seen.client = caller.client?.id;
    // A listen session is a write: a read_only token gets the 403 every write gets.
    const client = authorize(registry, { method: 'POST', definition: {}, path: LISTEN_PATH }, caller, sandboxHeaders(req) as Record<string, unknown>)!;
    seen.client = client.id;
    // --rate-limit counts a listen request as it counts any other of the client's, before any work.
    await this.deps.admit?.(client.id);
    // The handshake is checked before the endpoint is written: a request the WebSocket library would refuse creates nothing.
    checkHandshake(req);
    const { name, events } = listenRequest(url.searchParams.getAll('name'), url.searchParams.getAll('events'), url.searchParams.keys());
    const session = sessionOf(url.searchParams.get('session'));
    checkNotSuperseded(this.held.get(keyOf(client.id, name)), name, session, url.searchParams.get('resume') === '1');
    const { endpoint, held } = await listeners.open(client, name, events);
    if (this.closed) throw new ApiError(503, 'The sandbox is stopping: it takes no new listeners.');
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const key = keyOf(client.id, name);
      const older = this.held.get(key);
      const conn = new Connection(ws, client, name, endpoint.id, session);
      this.held.set(key, conn);
      if (older) {
        older.endAll('listener disconnected');
        older.ws.close(CLOSE.replaced.code, CLOSE.replaced.reason);
      }
      this.watch(conn, listeners);
      ws.send(JSON.stringify({ type: 'ready', listener: name, endpoint_id: endpoint.id, secret: endpoint.secret, events: endpoint.events, held, now: Date.now() }));
      this.deps.logger.info({ client: client.id, listener: name, endpoint: endpoint.id, held }, 'listener connected');
      void listeners.resume(client.id, endpoint.id).catch((err: unknown) => this.failed('resuming held deliveries', err, 'a listener that connected gets them at its next check', { client: client.id, listener: name }));
    });
  }

  /** The connection's messages, keep-alive, resumes and `last_seen_at`, and its end. */
  private watch(conn: Connection, listeners: Listeners): void {
    const { ws, client, name, endpointId } = conn;
    const log = this.deps.logger;
    const checkFailed = (err: unknown) => this.failed('listener check', err, `a connected listener's endpoint and held deliveries are looked at again ${LISTEN_RESUME_MS / 1000} s later`, { client: client.id, listener: name });
    const dropped = () => log.warn({ client: client.id, listener: name }, `listener dropped: more than ${CONTROL_FRAMES_PER_PING} pings and pongs between two of the sandbox's pings`);
    ws.on('pong', () => conn.ponged() && dropped());
    ws.on('ping', () => conn.controlFrame() && dropped());
    ws.on('message', (data: RawData, isBinary: boolean) => conn.received(data, isBinary));
    ws.on('error', (err) => log.debug({ err, listener: name }, 'listener connection error'));
    conn.timers.push(
      setInterval(() => {
        if (!conn.alive) return ws.terminate();
        conn.pinged();
        // Its sending time: the listener keeps its sense of how late a message is against steps of either wall clock.
        ws.ping(String(Date.now()));
      }, LISTEN_PING_MS).unref(),
      // Still its endpoint, enabled? (deleted through the API, reset or disabled on another replica)
      setInterval(() => void checkEndpoint(listeners, conn, () => this.held.get(keyOf(client.id, name)) === conn).catch(checkFailed), LISTEN_RESUME_MS).unref(),
      setInterval(() => void listeners.seen(client.id, endpointId).catch(() => undefined), LISTEN_SEEN_MS).unref(),
    );
    ws.on('close', (code: number, reason: Buffer) => {
      for (const t of conn.timers) clearInterval(t);
      conn.endAll('listener disconnected');
      if (this.held.get(keyOf(client.id, name)) === conn) this.held.delete(keyOf(client.id, name));
      // The close code says why: replaced (4001), removed (4002), disabled (4003), reset (4004), a stop (1001), a malformed message (1008), gone without a close (1006).
      log.info({ client: client.id, listener: name, code, ...(reason.length > 0 ? { reason: reason.toString() } : {}) }, 'listener disconnected');
      if (!this.closed) void listeners.seen(client.id, endpointId).catch(() => undefined);
    });
  }

  async attempt(attempt: RelayedAttempt, shutdown: AbortSignal): Promise<RelayResult | 'not_connected' | undefined> {
    const conn = this.held.get(keyOf(attempt.client_id, attempt.listener));
    if (!conn || conn.ws.readyState !== conn.ws.OPEN) return this.deps.signals ? this.handOff(attempt, shutdown) : 'not_connected';
    return conn.send(attempt, shutdown);
  }

  /**
   * An attempt for a listener this replica does not hold, handed to the replica that does
   * through the database: it answers "taken" at once and the result later. Nobody takes
   * it within HANDOFF_TAKEN_MS: not connected (held). Taken but no result within the
   * listener's own wait plus a margin: timed out, as a silent receiver.
   */
  private handOff(attempt: RelayedAttempt, shutdown: AbortSignal): Promise<RelayResult | 'not_connected' | undefined> {
    const r = randomUUID();
    const started = performance.now();
    const timedOut = (): RelayResult => ({ status_code: null, duration_ms: Math.round(performance.now() - started), error: `timed out after ${attempt.timeout_ms} ms`, response_body: '', retry_after: null });
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout;
      const done = (outcome: RelayResult | 'not_connected' | undefined) => {
        clearTimeout(timer);
        this.asked.delete(r);
        shutdown.removeEventListener('abort', aborted);
        resolve(outcome);
      };
      const aborted = () => done(undefined);
      shutdown.addEventListener('abort', aborted, { once: true });
      timer = setTimeout(() => done('not_connected'), HANDOFF_TAKEN_MS);
      this.asked.set(r, {
        taken: () => {
          clearTimeout(timer);
          timer = setTimeout(() => done(timedOut()), attempt.timeout_ms + LISTEN_ANSWER_MARGIN_MS + HANDOFF_TAKEN_MS);
        },
        result: (result) => done(result ?? timedOut()),
      });
      const { client_id: c, listener: l, delivery_id: d, event: e, order_no: o, timeout_ms: tm, headers: h, check: k, chaos: ch } = attempt;
      this.signal({ t: 'req', r, from: this.replica, c, l, d, e, o, tm, h, by: Date.now() + HANDOFF_TAKE_WITHIN_MS, ...(k ? { k, b: attempt.body } : {}), ...(ch ? { ch } : {}) }).catch(() => done('not_connected'));
    });
  }

  /** Another replica's message on LISTEN_CHANNEL. */
  private async signalled(payload: string): Promise<void> {
    const m = JSON.parse(payload) as Signal;
    if (m.t === 'taken' || m.t === 'here' || m.t === 'res') {
      if (m.to !== this.replica) return;
      const asked = this.asked.get(m.r);
      if (m.t === 'res') asked?.result(m.x);
      else asked?.taken();
      return;
    }
    if (m.from === this.replica) return;
    const conn = this.held.get(keyOf(m.c, m.l));
    if (!conn) return;
    if (m.t === 'who') return this.signal({ t: 'here', r: m.r, to: m.from });
    // Too late (the asker holds the delivery by now), or this replica is stopping: not taken.
    if (!this.taking || Date.now() > m.by) return;
    const work = this.forward(conn, m);
    this.inHand.set(work, m.tm + LISTEN_ANSWER_MARGIN_MS);
    try {
      await work;
    } finally {
      this.inHand.delete(work);
    }
  }

  /** A hand-off taken: "taken" at once, then the listener's answer (or why there is none). The endpoint's secret is read here, not carried (a NOTIFY's text may reach the database's logs). */
  private async forward(conn: Connection, m: Extract<Signal, { t: 'req' }>): Promise<void> {
    const started = performance.now();
    await this.signal({ t: 'taken', r: m.r, to: m.from });
    const body = m.b ?? (await this.deps.bodyOf?.(m.d));
    const secret = await this.listeners?.current(conn.client.id, conn.endpointId).then((e) => e?.secret, () => undefined);
    const result =
      body === undefined
        ? { status_code: null, duration_ms: 0, error: 'the delivery was removed before the listener got it', response_body: '', retry_after: null }
        : await conn.send({ client_id: m.c, listener: m.l, delivery_id: m.d, event: m.e, order_no: m.o, timeout_ms: m.tm, headers: m.h, body, ...(m.k ? { check: m.k } : {}), ...(m.ch ? { chaos: m.ch } : {}), ...(secret ? { secret } : {}) }, this.stopping.signal);
    const cut: RelayResult = { status_code: null, duration_ms: Math.round(performance.now() - started), error: HANDOFF_CUT, response_body: '', retry_after: null };
    await this.signal({ t: 'res', r: m.r, to: m.from, x: result ?? cut });
  }

  /**
   * The start of a stop: takes no more hand-offs from other replicas, and waits for those
   * taken (each at most its webhook timeout plus the answer margin) so their listeners'
   * answers still go back. Call before the dispatcher and this relay close.
   */
  async drain(): Promise<void> {
    this.taking = false;
    if (this.inHand.size === 0) return;
    const waitMs = Math.max(...this.inHand.values());
    await within(Promise.allSettled([...this.inHand.keys()]), waitMs);
  }

  private signal(message: Signal): Promise<void> {
    return this.deps.signals!.publish(LISTEN_CHANNEL, JSON.stringify(message));
  }

  connectedHere(clientId: string, name: string): boolean {
    return this.held.has(keyOf(clientId, name));
  }

  /** Here, or (PostgreSQL) on a replica that says so within a moment: a best effort. */
  async connected(clientId: string, name: string): Promise<boolean> {
    if (this.connectedHere(clientId, name)) return true;
    if (!this.deps.signals || this.closed) return false;
    const r = randomUUID();
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      // A question that cannot go out (a database hanging) is not waited on past four times WHO_MS.
      const cap = setTimeout(() => answer(false), 4 * WHO_MS);
      const answer = (held: boolean): void => {
        clearTimeout(timer);
        clearTimeout(cap);
        this.asked.delete(r);
        resolve(held);
      };
      this.asked.set(r, { taken: () => answer(true), result: () => undefined });
      // The replicas have WHO_MS from when the question went out: questions asked together wait for the signals' connections.
      const wait = (): void => void (this.asked.has(r) && (timer = setTimeout(() => answer(false), WHO_MS)));
      this.signal({ t: 'who', r, from: this.replica, c: clientId, l: name }).then(wait, () => answer(false));
    });
  }

  removed(clientId: string, name: string, close: { code: number; reason: string } = CLOSE.removed): void {
    const conn = this.held.get(keyOf(clientId, name));
    if (!conn) return;
    this.held.delete(keyOf(clientId, name));
    conn.endAll('listener disconnected');
    conn.ws.close(close.code, close.reason);
  }

  /** A reset of the client: every listener of it is closed (4004: it connects again, making its endpoint anew). */
  removedClient(clientId: string): void {
    for (const conn of [...this.held.values()]) if (conn.client.id === clientId) this.removed(clientId, conn.name, CLOSE.reset);
  }

  /** Shutting down: every listener is closed with 1001 (the CLI reconnects, to another replica or after the restart). */
  close(): void {
    this.closed = true;
    this.taking = false;
    this.stopping.abort();
    for (const conn of this.held.values()) {
      conn.endAll('listener disconnected');
      conn.ws.close(CLOSE.stopping.code, CLOSE.stopping.reason);
      // A listener that does not answer the close (half open) would hold the stop for the WebSocket library's 30 s.
      setTimeout(() => {
        if (conn.ws.readyState !== conn.ws.CLOSED) conn.ws.terminate();
      }, CLOSE_GRACE_MS).unref();
    }
    this.held.clear();
    this.wss.close();
  }
}
