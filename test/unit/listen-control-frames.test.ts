import { describe, expect, it, vi } from 'vitest';
import { Connection, CONTROL_FRAMES_PER_PING } from '../../src/http/listen-protocol.js';

/** A listen session's connection on a stand-in socket: what matters here is whether it was terminated. */
function connection() {
  const ws = { terminate: vi.fn() };
  return { ws, conn: new Connection(ws as any, { id: 'client-a' } as any, 'laptop', 'ep_1') };
}

describe("a listener's pings and pongs", () => {
  it('are allowed CONTROL_FRAMES_PER_PING between two of the server\'s pings, afresh after each: a listen answering every ping for hours stays', () => {
    const { ws, conn } = connection();
    for (let ping = 0; ping < 1_000; ping++) {
      conn.pinged();
      for (let i = 0; i < CONTROL_FRAMES_PER_PING; i++) expect(conn.controlFrame()).toBe(false);
    }
    expect(ws.terminate).not.toHaveBeenCalled();
  });

  it('past the allowance drop the connection, said once however many frames follow', () => {
    const { ws, conn } = connection();
    conn.pinged();
    const dropped = Array.from({ length: CONTROL_FRAMES_PER_PING + 100 }, () => conn.controlFrame());
    expect(dropped.filter(Boolean)).toHaveLength(1);
    expect(dropped.indexOf(true)).toBe(CONTROL_FRAMES_PER_PING);
    expect(ws.terminate).toHaveBeenCalledTimes(1);
  });

  it('leave a listener that missed the last ping to the ping timer: pinged() marks it not alive until its pong', () => {
    const { conn } = connection();
    expect(conn.alive).toBe(true);
    conn.pinged();
    expect(conn.alive).toBe(false);
  });
});
