import { afterEach, describe, expect, it, vi } from 'vitest';
import { FairGate, PermitTimeout, type Release } from '../../src/store/postgres/fair-gate.js';

/**
 * With the gate's one permit held, asks for a permit for each lane in `arrivals`, in
 * order, then gives the held one back; each waiter gives its permit back once granted.
 * Resolves with the order they were granted in.
 */
async function grants(arrivals: string[]): Promise<string[]> {
  const gate = new FairGate(1);
  const held = await gate.acquire('holder', 1_000);
  const granted: string[] = [];
  const all = arrivals.map(async (lane, i) => {
    const release = await gate.acquire(lane, 1_000);
    granted.push(`${lane}${i}`);
    release();
  });
  held();
  await Promise.all(all);
  return granted;
}

describe('FairGate', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('grants as many permits at once as it has, without waiting', async () => {
    const gate = new FairGate(3);
    await Promise.all([gate.acquire('a', 10), gate.acquire('a', 10), gate.acquire('b', 10)]);
    expect(gate.inUse).toBe(3);
  });

  it('hands a permit given back to one waiter of each waiting lane in turn, lanes in the order they came', async () => {
    expect(await grants(['a', 'a', 'a', 'a', 'b', 'c', 'c'])).toEqual(['a0', 'b4', 'c5', 'a1', 'c6', 'a2', 'a3']);
  });

  it("keeps each lane's own waiters first come first", async () => {
    const granted = await grants(['a', 'b', 'a', 'b', 'a', 'b']);
    expect(granted.filter((g) => g.startsWith('a'))).toEqual(['a0', 'a2', 'a4']);
    expect(granted.filter((g) => g.startsWith('b'))).toEqual(['b1', 'b3', 'b5']);
  });

  it('gives the permit back when the work run under it fails, and the next waiter gets it', async () => {
    const gate = new FairGate(1);
    const failing = gate.run('a', 1_000, async () => {
      throw new Error('statement failed');
    });
    const next = gate.run('b', 1_000, async () => gate.inUse);
    await expect(failing).rejects.toThrow('statement failed');
    expect(await next).toBe(1);
    expect(gate.inUse).toBe(0);
  });

  it('counts a permit given back twice once', async () => {
    const gate = new FairGate(1);
    const release = await gate.acquire('a', 1_000);
    const waiting = gate.acquire('b', 1_000);
    release();
    release();
    await waiting;
    expect(gate.inUse).toBe(1);
    await expect(Promise.race([gate.acquire('c', 1_000), new Promise((resolve) => setTimeout(resolve, 20, 'still waiting'))])).resolves.toBe('still waiting');
  });

  it('rejects a waiter with a PermitTimeout (pg-pool’s message) once its wait is over, and leaves it out of later grants', async () => {
    vi.useFakeTimers();
    const gate = new FairGate(1);
    const held = await gate.acquire('a', 500);
    const late = gate.acquire('b', 500);
    const outcome = late.catch((error: unknown) => error);
    let granted: Release | undefined;
    const patient = gate.acquire('c', 5_000).then((release) => (granted = release));
    await vi.advanceTimersByTimeAsync(499);
    expect(granted).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    const error = await outcome;
    expect(error).toBeInstanceOf(PermitTimeout);
    expect((error as Error).message).toBe('timeout exceeded when trying to connect');
    // The permit given back goes past the waiter that gave up, to the next one.
    held();
    await patient;
    expect(granted).toBeTypeOf('function');
    expect(gate.inUse).toBe(1);
    granted!();
    expect(gate.inUse).toBe(0);
  });

  it('keeps the last free permit for another lane: a lane holding long never makes another lane wait for its releases', async () => {
    const gate = new FairGate(3);
    const a1 = await gate.acquire('a', 1_000);
    await gate.acquire('a', 1_000);
    let third: Release | undefined;
    const waitingA = gate.acquire('a', 1_000).then((release) => (third = release));
    await new Promise((resolve) => setTimeout(resolve, 5));
    // A holds two of three; its third waits although one is free, and b takes that one at once.
    expect([gate.inUse, third]).toEqual([2, undefined]);
    const b = await Promise.race([gate.acquire('b', 1_000), new Promise<'waiting'>((resolve) => setTimeout(resolve, 20, 'waiting'))]);
    expect(b).toBeTypeOf('function');
    expect(gate.inUse).toBe(3);
    // Once a gives one back, its own waiter gets it.
    a1();
    await waitingA;
    expect(gate.inUse).toBe(3);
  });

  it('lets the one lane of a gate of one permit take it', async () => {
    const gate = new FairGate(1);
    const release = await gate.acquire('a', 1_000);
    const next = gate.acquire('a', 1_000);
    release();
    await expect(next).resolves.toBeTypeOf('function');
  });

  it('refuses a capacity that is not a positive whole number', () => {
    for (const capacity of [0, -1, 1.5, Number.NaN]) expect(() => new FairGate(capacity)).toThrow(RangeError);
  });
});
