import { describe, expect, it } from 'vitest';
import { EventBus } from '../../src/events/index.js';
import type { Repositories } from '../../src/store/index.js';

const tx = {} as Repositories;

describe('the event bus', () => {
  it('asks each subscriber for what it will read of a client, in the producer’s unit', async () => {
    const bus = new EventBus();
    const asked: Array<[string, Repositories]> = [];
    bus.subscribe(async () => undefined, async (clientId, unit) => void asked.push([clientId, unit]));
    bus.subscribe(async () => undefined); // one that reads nothing ahead
    await bus.prepare('client-a', tx);
    expect(asked).toEqual([['client-a', tx]]);
  });

  it('ends a failed preparation only after every subscriber’s read has, with the first failure', async () => {
    const bus = new EventBus();
    let slowDone = false;
    bus.subscribe(async () => undefined, () => Promise.reject(new Error('settings unreadable')));
    bus.subscribe(async () => undefined, () => new Promise((resolve) => setTimeout(() => resolve((slowDone = true)), 20)));
    await expect(bus.prepare('client-a', tx)).rejects.toThrow('settings unreadable');
    expect(slowDone).toBe(true);
  });

  it('waits for the other reads when a preparer throws at once instead of rejecting', async () => {
    const bus = new EventBus();
    let laterDone = false;
    bus.subscribe(async () => undefined, () => {
      throw new Error('no such client');
    });
    bus.subscribe(async () => undefined, () => new Promise((resolve) => setTimeout(() => resolve((laterDone = true)), 20)));
    await expect(bus.prepare('client-a', tx)).rejects.toThrow('no such client');
    expect(laterDone).toBe(true);
  });
});
