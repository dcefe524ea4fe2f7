import { describe, expect, it } from 'vitest';
import { FairTurns } from '../../src/http/turns.js';

/** Holds the event loop for `ms`, as a request's synchronous work does. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** Asks `turns` for a turn for each client in `arrivals`, in order; resolves with the order they were served in. */
function serve(turns: FairTurns, arrivals: string[], work: (client: string) => void = () => undefined): Promise<string[]> {
  const served: string[] = [];
  return Promise.all(
    arrivals.map(async (client, i) => {
      await turns.turn(client);
      served.push(`${client}${i}`);
      work(client);
    }),
  ).then(() => served);
}

describe('FairTurns', () => {
  it('serves one request of each waiting client per round, clients in the order they came', async () => {
    const turns = new FairTurns();
    const served = await serve(turns, ['a', 'a', 'a', 'a', 'b', 'c', 'c']);
    expect(served).toEqual(['a0', 'b4', 'c5', 'a1', 'c6', 'a2', 'a3']);
  });

  it('keeps each client’s own requests in the order they came', async () => {
    const served = await serve(new FairTurns(), ['a', 'b', 'a', 'b', 'a', 'b']);
    expect(served.filter((s) => s.startsWith('a'))).toEqual(['a0', 'a2', 'a4']);
    expect(served.filter((s) => s.startsWith('b'))).toEqual(['b1', 'b3', 'b5']);
  });

  it('lets the event loop read new requests once a slice is spent: a late arrival is served in the next round, not after every request already waiting', async () => {
    const turns = new FairTurns(10);
    const served: string[] = [];
    const heavy = Array.from({ length: 20 }, (_, i) =>
      turns.turn('heavy').then(() => {
        served.push(`heavy${i}`);
        busy(4);
      }),
    );
    // Arrives from the socket a turn of the event loop later, while the heavy client's requests are being served.
    const light = new Promise<void>((resolve) => setTimeout(resolve, 0)).then(async () => {
      await turns.turn('light');
      served.push('light');
    });
    await Promise.all([...heavy, light]);
    const position = served.indexOf('light');
    // A slice of 10 ms holds about three of the heavy requests; without slices the light one would come 21st.
    expect(position).toBeGreaterThan(0);
    expect(position).toBeLessThanOrEqual(8);
  });

  it('counts a request’s work, promise continuations included, in the round that let it go', async () => {
    const turns = new FairTurns(1_000);
    const order: string[] = [];
    const request = (client: string) =>
      turns.turn(client).then(async () => {
        order.push(`${client} starts`);
        await Promise.resolve();
        await Promise.resolve();
        order.push(`${client} answers`);
      });
    await Promise.all([request('a'), request('a'), request('b')]);
    // a's second request waits for the next round, which begins once the first round's requests have answered.
    expect(order).toEqual(['a starts', 'b starts', 'a answers', 'b answers', 'a starts', 'a answers']);
  });

  it('serves requests that come after it went idle', async () => {
    const turns = new FairTurns();
    expect(await serve(turns, ['a', 'b'])).toEqual(['a0', 'b1']);
    expect(await serve(turns, ['b', 'a', 'b'])).toEqual(['b0', 'a1', 'b2']);
  });
});
