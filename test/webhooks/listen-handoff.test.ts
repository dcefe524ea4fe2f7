import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import type { ClientRegistry } from '../../src/clients/index.js';
import { ListenServer } from '../../src/http/listen.js';
import { Connection, HANDOFF_CUT, HANDOFF_TAKE_WITHIN_MS, keyOf, LISTEN_RESUME_MS } from '../../src/http/listen-protocol.js';
import { domainMessages, Unavailable } from '../../src/shared/index.js';

/**
 * The holder's side of a hand-off between replicas, driven with the messages another
 * replica would send (LISTEN/NOTIFY stands in as a list) and a listener connection whose
 * socket records what it is sent.
 */
function holder() {
  const published: any[] = [];
  let deliver: (payload: string) => void = () => undefined;
  const server = new ListenServer({
    registry: {} as ClientRegistry,
    logger: pino({ level: 'silent' }),
    signals: { publish: async (_channel, payload) => void published.push(JSON.parse(payload)), subscribe: async (_channel, handler) => void (deliver = handler) },
    bodyOf: async () => '{"event":"awb.generated"}',
  });
  const sent: any[] = [];
  const ws = { readyState: 1, OPEN: 1, CLOSED: 3, bufferedAmount: 0, send: (data: string, cb?: (err?: Error) => void) => (sent.push(JSON.parse(data)), cb?.()), close: () => undefined, terminate: () => undefined };
  const conn = new Connection(ws as any, { id: 'client-a' } as any, 'laptop', 'ep_1');
  const { waiting } = conn;
  (server as any).held.set('client-a\u0000laptop', conn);
  const request = (r: string, by = Date.now() + HANDOFF_TAKE_WITHIN_MS) =>
    deliver(JSON.stringify({ t: 'req', r, from: 'other', c: 'client-a', l: 'laptop', d: 'dlv_1', e: 'awb.generated', o: null, tm: 5_000, h: {}, by }));
  const answer = (status: number) => {
    for (const [id, w] of waiting) {
      waiting.delete(id);
      w.resolve({ status_code: status, duration_ms: 3, error: null, response_body: '', retry_after: null });
    }
  };
  const settle = () => new Promise((r) => setTimeout(r, 20));
  return { server, published, sent, request, answer, settle };
}

describe('listener hand-offs between replicas: the holder', () => {
  it('takes a request within its deadline and forwards it; drops one read past it (the asker holds that delivery)', async () => {
    const h = holder();
    await h.server.start();
    h.request('late', Date.now() - 1);
    await h.settle();
    expect(h.published).toEqual([]);
    expect(h.sent).toEqual([]);
    h.request('in-time');
    await h.settle();
    expect(h.published).toEqual([{ t: 'taken', r: 'in-time', to: 'other' }]);
    expect(h.sent.map((m) => m.delivery_id)).toEqual(['dlv_1']);
  });

  it('a stop drains: no new hand-off is taken, the one taken is answered before drain() resolves', async () => {
    const h = holder();
    await h.server.start();
    h.request('first');
    await h.settle();
    let drained = false;
    const drain = h.server.drain().then(() => (drained = true));
    h.request('after-stop');
    await h.settle();
    expect(h.published.filter((m) => m.t === 'taken').map((m) => m.r)).toEqual(['first']);
    expect(drained).toBe(false);
    h.answer(204);
    await drain;
    expect(h.published.filter((m) => m.t === 'res')).toEqual([{ t: 'res', r: 'first', to: 'other', x: expect.objectContaining({ status_code: 204 }) }]);
    h.server.close();
  });

  it('a hand-off cut by the stop answers that the holder stopped, not a timeout', async () => {
    const h = holder();
    await h.server.start();
    h.request('cut');
    await h.settle();
    h.server.close();
    await h.settle();
    const res = h.published.find((m) => m.t === 'res');
    expect(res.x.status_code).toBeNull();
    expect(res.x.error).toBe(HANDOFF_CUT);
  });
});

describe("a connected listener's checks and hand-offs while the store is away", () => {
  it('a hand-off that cannot answer the asker warns once without a stack, saying what the asker does instead', async () => {
    const lines: any[] = [];
    const reason = 'the database: ECONNREFUSED';
    let deliver: (payload: string) => void = () => undefined;
    const server = new ListenServer({
      registry: {} as ClientRegistry,
      logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) }),
      signals: { publish: () => Promise.reject(new Unavailable(domainMessages.storeUnavailable(reason))), subscribe: async (_channel, handler) => void (deliver = handler) },
    });
    const ws = { readyState: 1, OPEN: 1, send: () => undefined, close: () => undefined, terminate: () => undefined };
    (server as any).held.set(keyOf('client-a', 'laptop'), new Connection(ws as any, { id: 'client-a' } as any, 'laptop', 'ep_1'));
    await server.start();
    for (const r of ['one', 'two']) deliver(JSON.stringify({ t: 'req', r, from: 'other', c: 'client-a', l: 'laptop', d: 'dlv_1', e: 'awb.generated', o: null, tm: 5_000, h: {}, b: '{}', by: Date.now() + HANDOFF_TAKE_WITHIN_MS }));
    await new Promise((r) => setTimeout(r, 20));
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, msg: 'listener hand-off: the replica that asked holds the delivery for the listener, or counts the attempt as timed out, the store being unavailable' }),
    ]);
    expect(lines[0].err).toBeUndefined();
    server.close();
  });


  it('warn once without a stack, saying the check could not read, and count the rest in one more warning a minute later', async () => {
    vi.useFakeTimers();
    try {
      const lines: any[] = [];
      const server = new ListenServer({ registry: {} as ClientRegistry, logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) }) });
      // The PostgreSQL store's outage, as its reads of the endpoint meet it.
      const reason = 'the database: ECONNREFUSED';
      const away = () => Promise.reject(new Unavailable(domainMessages.storeUnavailable(reason), undefined, domainMessages.storeUnreadable(reason)));
      const listeners = { current: away, removedByReset: away, resume: away };
      const ws = { readyState: 1, OPEN: 1, on: () => undefined, ping: () => undefined, close: () => undefined, terminate: () => undefined };
      const conn = new Connection(ws as any, { id: 'client-a' } as any, 'laptop', 'ep_1');
      (server as any).held.set(keyOf('client-a', 'laptop'), conn);
      (server as any).watch(conn, listeners);
      await vi.advanceTimersByTimeAsync(4 * LISTEN_RESUME_MS);
      expect(lines).toEqual([
        expect.objectContaining({
          level: 40,
          msg: "listener check: a connected listener's endpoint and held deliveries are looked at again 5 s later, the store being unavailable",
          error: 'The sandbox cannot read from its database right now (the database: ECONNREFUSED). Retry shortly.',
          client: 'client-a',
          listener: 'laptop',
        }),
      ]);
      expect(lines[0].err).toBeUndefined();
      // The listener goes away: its checks stop, and the minute's count comes at its end.
      for (const t of conn.timers) clearInterval(t);
      await vi.advanceTimersByTimeAsync(60_000);
      expect(lines.slice(1)).toEqual([
        expect.objectContaining({ level: 40, msg: 'listener check: 3 more failed in the minute after the first, while the store was unavailable (clients client-a)', failures: 3 }),
      ]);
    } finally {
      vi.useRealTimers();
    }
  });
});
