import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ClientRegistry } from '../../src/clients/index.js';
import { ListenServer } from '../../src/http/listen.js';
import type { Signals } from '../../src/store/index.js';

/**
 * Signals between replicas whose every message takes `sendMs` to go out (a busy database:
 * the questions asked together queue for its connections), and another replica that holds
 * every listener, answering each question `answerMs` after it went out.
 */
function slowBus(sendMs: number, answerMs: number): Signals {
  const handlers: Array<(payload: string) => void> = [];
  return {
    async subscribe(_channel, handler) {
      handlers.push(handler);
    },
    async publish(_channel, payload) {
      await new Promise((resolve) => setTimeout(resolve, sendMs));
      const m = JSON.parse(payload) as { t: string; r: string; from: string };
      if (m.t === 'who') setTimeout(() => handlers.forEach((h) => h(JSON.stringify({ t: 'here', r: m.r, to: m.from }))), answerMs);
    },
  };
}

describe("a replica asking the others whether they hold a listener", () => {
  it('gives them their 300 ms from when its question went out, not from when it was asked: questions asked together wait to go out', async () => {
    const server = new ListenServer({ registry: new ClientRegistry([]), logger: pino({ level: 'silent' }), signals: slowBus(400, 100) });
    await server.start();
    const asked = await Promise.all(['laptop', 'ci', 'desk'].map((name) => server.connected('client-a', name)));
    expect(asked).toEqual([true, true, true]);
    // No answer within its 300 ms: not connected.
    const silent = new ListenServer({ registry: new ClientRegistry([]), logger: pino({ level: 'silent' }), signals: slowBus(10, 1_000) });
    await silent.start();
    expect(await silent.connected('client-a', 'laptop')).toBe(false);
    // A question that cannot go out (the database hanging) is not waited on past 1.2 s (four times 300 ms).
    const stuck = new ListenServer({ registry: new ClientRegistry([]), logger: pino({ level: 'silent' }), signals: slowBus(10_000, 0) });
    await stuck.start();
    const began = performance.now();
    expect(await stuck.connected('client-a', 'laptop')).toBe(false);
    expect(performance.now() - began).toBeLessThan(5_000);
    stuck.close();
    silent.close();
    server.close();
  });
});
