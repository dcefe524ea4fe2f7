import { describe, expect, it } from 'vitest';
import { listInParts, type ReplySink, type StreamReply } from '../../src/http/handler.js';

/** Writes a streamed reply into a string, as a connection with room for everything would. */
function collect(reply: StreamReply): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    const sink: ReplySink = {
      write: (chunk) => ((body += chunk), true),
      onDrain: () => undefined,
      end: (chunk) => resolve(body + (chunk ?? '')),
      abort: () => resolve(`${body}<aborted>`),
      closed: false,
      onClose: () => undefined,
    };
    reply.stream(sink);
  });
}

describe('a listing written in parts', () => {
  const items = Array.from({ length: 2_000 }, (_, i) => ({ n: i, text: 'x'.repeat(100) }));

  it("makes each item's view as its part is written, and takes the request's turn before each later part", async () => {
    let viewed = 0;
    let turns = 0;
    const reply = listInParts({ total: items.length }, 'items', items, (item) => ((viewed += 1), { ...item, seen: true }), async () => {
      turns += 1;
    }) as StreamReply;
    // The first part only: about 64 KiB of the 230 KiB.
    expect(viewed).toBeGreaterThan(0);
    expect(viewed).toBeLessThan(items.length / 2);
    const body = JSON.parse(await collect(reply)) as { total: number; items: Array<{ n: number; seen: boolean }> };
    expect(body.total).toBe(2_000);
    expect(body.items.map((item) => item.n)).toEqual(items.map((item) => item.n));
    expect(body.items.every((item) => item.seen)).toBe(true);
    expect(viewed).toBe(items.length);
    expect(turns).toBeGreaterThanOrEqual(3);
  });

  it('cuts the answer off, and throws nothing, when a later part cannot be made (an order the view cannot show)', async () => {
    const reply = listInParts({ total: items.length }, 'items', items, (item) => {
      if (item.n === 1_500) throw new Error('Order names an unknown scenario');
      return item;
    }) as StreamReply;
    const body = await collect(reply);
    expect(body.endsWith('<aborted>')).toBe(true);
    expect(body).not.toContain('"n":1500');
  });
});
