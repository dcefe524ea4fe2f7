import { afterEach, describe, expect, it, vi } from 'vitest';
import { TooManyRequests } from '../../src/shared/errors.js';
import { performFault } from '../../src/http/pipeline/fault-actions.js';
import type { FaultRule } from '../../src/records/fault-rule.js';
import type { OperationInput } from '../../src/http/handler.js';
import { FairTurns } from '../../src/http/turns.js';

/** A least cost per turn so big that every turn counts the same: one request each, whatever each took. */
const ONE_EACH = 1_000;

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
  afterEach(() => {
    vi.useRealTimers();
  });

  it('serves one request of each waiting client in turn, clients in the order they came', async () => {
    // Turns of equal cost (here all counted as one second, so a GC pause cannot reorder them).
    const turns = new FairTurns(undefined, undefined, undefined, ONE_EACH);
    const served = await serve(turns, ['a', 'a', 'a', 'a', 'b', 'c', 'c']);
    expect(served).toEqual(['a0', 'b4', 'c5', 'a1', 'c6', 'a2', 'a3']);
  });

  it('keeps each client’s own requests in the order they came', async () => {
    const served = await serve(new FairTurns(undefined, undefined, undefined, ONE_EACH), ['a', 'b', 'a', 'b', 'a', 'b']);
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

  it('shares turns by the loop time they take: a client of cheap requests gets about as many in as a dear request of another takes milliseconds', async () => {
    const turns = new FairTurns(1_000);
    // Client a's requests hold the loop 20 ms each, b's next to nothing (counted as 1 ms each).
    const arrivals = [...Array.from({ length: 6 }, () => 'a'), ...Array.from({ length: 40 }, () => 'b')];
    const served = await serve(turns, arrivals, (client) => busy(client === 'a' ? 20 : 0));
    const beforeThirdOfA = served.slice(0, served.indexOf('a2')).filter((s) => s.startsWith('b')).length;
    // Turns counted one request each would let two of b's in before a's third; by time, about forty.
    expect(beforeThirdOfA).toBeGreaterThanOrEqual(25);
    expect(served.slice(0, served.indexOf('a4')).filter((s) => s.startsWith('b'))).toHaveLength(40);
    // Each client's own in the order they came.
    expect(served.filter((s) => s.startsWith('a'))).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a5']);
  });

  it('gives no credit for having been away: a client that begins waiting starts where the one served did', async () => {
    const turns = new FairTurns(1_000, undefined, undefined, ONE_EACH);
    const served: string[] = [];
    const late: Array<Promise<unknown>> = [];
    // a's 20 requests wait; b's 4 arrive while a's 10th is served, and must not then get 4 turns in a row.
    const first = Array.from({ length: 20 }, (_, i) =>
      turns.turn('a').then(() => {
        served.push(`a${i}`);
        if (i === 9) for (let j = 0; j < 4; j++) late.push(turns.turn('b').then(() => served.push(`b${j}`)));
      }),
    );
    await Promise.all(first);
    await Promise.all(late);
    expect(served.slice(10, 18)).toEqual(['b0', 'a10', 'b1', 'a11', 'b2', 'a12', 'b3', 'a13']);
  });

  it('counts the time a request took outside its turn (its observers, once it closed) as its client’s, not as that of the turn it ran in', async () => {
    const turns = new FairTurns(1_000);
    let observed = false;
    // a's first request's observers (100 ms) run during b's first turn, as a close listener does.
    // Long beside the turns' 1 ms, so that a pause of the machine in b's turn (a busy CI
    // runner's, tens of ms) cannot make up for it.
    const served = await serve(turns, ['a', 'a', 'a', 'a', 'a', 'b', 'b', 'b', 'b', 'b'], (client) => {
      if (client === 'b' && !observed) {
        observed = true;
        busy(100);
        turns.charge('a', 100);
      }
    });
    // Counted in b's turn, b would have had as long as a, and they would have gone in turn.
    expect(served).toEqual(['a0', 'b5', 'b6', 'b7', 'b8', 'b9', 'a1', 'a2', 'a3', 'a4']);
  });

  it('keeps a client’s time over a short absence while others wait', async () => {
    const turns = new FairTurns(1_000);
    const served: string[] = [];
    const back: Array<Promise<unknown>> = [];
    // a's one 30 ms request, then b's 30; a comes back while b's third is served.
    const first = [
      turns.turn('a').then(() => (served.push('a0'), busy(30))),
      ...Array.from({ length: 30 }, (_, i) =>
        turns.turn('b').then(() => {
          served.push(`b${i}`);
          if (i === 2) back.push(turns.turn('a').then(() => served.push('a1')));
        }),
      ),
    ];
    await Promise.all(first);
    await Promise.all(back);
    // a still owes its 30 ms: b's turns (1 ms each at least) go on until they have taken as long.
    expect(served.slice(0, served.indexOf('a1')).filter((s) => s.startsWith('b')).length).toBeGreaterThanOrEqual(10);
  });

  it('forgets every client’s time once no one waits', async () => {
    const turns = new FairTurns(1_000);
    // a alone: its dear turn is owed to no one.
    await turns.turn('a').then(() => busy(30));
    await new Promise((resolve) => setImmediate(resolve));
    const again: string[] = [];
    await Promise.all([turns.turn('a').then(() => again.push('a')), turns.turn('b').then(() => again.push('b'))]);
    expect(again).toEqual(['a', 'b']);
  });

  it('counts a request’s work, promise continuations included, in its turn', async () => {
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
    // The next request goes only once the one before has answered.
    expect(order).toEqual(['a starts', 'a answers', 'b starts', 'b answers', 'a starts', 'a answers']);
  });

  it('ends a slice after the request that spends it, however many clients wait', async () => {
    const turns = new FairTurns(10);
    const served: string[] = [];
    const requests = Array.from({ length: 40 }, (_, i) =>
      turns.turn(`client-${i}`).then(() => {
        served.push(`client-${i}`);
        busy(4);
      }),
    );
    // Queued behind the first slice: it runs once that slice has given the event loop back.
    const loopTurn = new Promise<void>((resolve) => setImmediate(resolve)).then(() => served.push('event loop'));
    await Promise.all([...requests, loopTurn]);
    // About three requests of 4 ms fill a slice of 10 ms; letting one of each of the 40 clients go before yielding would hold the loop for 160 ms.
    expect(served.indexOf('event loop')).toBeLessThanOrEqual(5);
  });

  it('refuses a request past the most a client may have waiting, with a 429, and takes the other clients’ and a request taking its turn again', async () => {
    const turns = new FairTurns(15, { requests: 2, bytes: 1_000 });
    const waiting = [turns.turn('a'), turns.turn('a')];
    await expect(turns.turn('a')).rejects.toBeInstanceOf(TooManyRequests);
    await expect(turns.turn('a')).rejects.toThrow(/at most 2, with/);
    await Promise.all([...waiting, turns.turn('b'), turns.turn('a', { capped: false })]);
    await turns.turn('a');
  });

  it('refuses a request whose body would pass the bytes a client may have waiting, but takes any one body when none waits', async () => {
    const turns = new FairTurns(15, { requests: 100, bytes: 1_000 });
    const waiting = [turns.turn('a', { bytes: 5_000 })];
    await expect(turns.turn('a', { bytes: 1 })).rejects.toBeInstanceOf(TooManyRequests);
    await Promise.all(waiting);
    const next = [turns.turn('a', { bytes: 600 }), turns.turn('b', { bytes: 600 })];
    await expect(turns.turn('a', { bytes: 600 })).rejects.toBeInstanceOf(TooManyRequests);
    next.push(turns.turn('a', { bytes: 400 }));
    await Promise.all(next);
    // Once let go, a request's bytes no longer count.
    await Promise.all([turns.turn('a', { bytes: 900 }), turns.turn('a', { bytes: 100 })]);
  });

  it('keeps serving when the test around it fakes the timers', async () => {
    const turns = new FairTurns();
    vi.useFakeTimers();
    expect(await serve(turns, ['a', 'b', 'a'])).toEqual(['a0', 'b1', 'a2']);
  });

  it('tells how long each request waited for its turn', async () => {
    const waits: number[] = [];
    const turns = new FairTurns(1_000, undefined, (ms) => waits.push(ms));
    await serve(turns, ['a', 'a', 'b'], () => busy(10));
    expect(waits).toHaveLength(3);
    // The third let go waited through the two before it.
    expect(waits[2]).toBeGreaterThanOrEqual(20);
    expect(waits[0]).toBeLessThan(waits[2]!);
  });

  it('serves requests that come after it went idle', async () => {
    // Turns of equal cost, so that a GC pause on a busy machine cannot reorder them.
    const turns = new FairTurns(undefined, undefined, undefined, ONE_EACH);
    expect(await serve(turns, ['a', 'b'])).toEqual(['a0', 'b1']);
    expect(await serve(turns, ['b', 'a', 'b'])).toEqual(['b0', 'a1', 'b2']);
  });

  it('has a request a latency fault delayed wait for a turn again before it is served', async () => {
    const order: string[] = [];
    let giveTurn: () => void = () => undefined;
    const rule = { id: 'rule-1', hits: 1, action: { type: 'latency', ms: 5 } } as unknown as FaultRule;
    const input = {
      turn: () => {
        order.push('asks for a turn');
        return new Promise<void>((resolve) => (giveTurn = resolve));
      },
    } as unknown as OperationInput;
    const delayed = performFault(rule, input, async () => {
      order.push('served');
      return { status: 201 };
    }, new AbortController().signal, () => 0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Its wait is long over, and it is not served until its turn comes.
    expect(order).toEqual(['asks for a turn']);
    giveTurn();
    expect(await delayed).toEqual({ status: 201 });
    expect(order).toEqual(['asks for a turn', 'served']);
  });
});
