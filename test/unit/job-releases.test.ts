import { afterEach, describe, expect, it, vi } from 'vitest';
import { Clocks } from '../../src/clock/index.js';
import { ManualClock } from '../../src/clock/clock.js';
import { JobKinds } from '../../src/jobs/kinds.js';
import { JobRunner, RELEASE_RETRY_MS } from '../../src/jobs/runner.js';
import { Running } from '../../src/jobs/running.js';
import type { ClaimedJob } from '../../src/records/index.js';
import { Unavailable } from '../../src/shared/index.js';
import type { Storage } from '../../src/store/index.js';

const job: ClaimedJob = { kind: 'endpoint-webhook', key: 'msg_1', client_id: 'a', due_at: 1_000, version: 1, claimed_by: 'worker_1', lease_until: 61_000 };

afterEach(() => vi.useRealTimers());

/** A store whose job releases fail while it is away (`back()` brings it), and the keys it released. */
function awayStore() {
  let away = true;
  const released: string[] = [];
  const storage = {
    jobs: {
      release: async (claimed: ClaimedJob) => {
        if (away) throw new Unavailable('the database: ECONNREFUSED');
        released.push(claimed.key);
      },
    },
  } as unknown as Storage;
  return { storage, released, back: () => void (away = false) };
}

describe('JobRunner: a claim given back while the store is away', () => {
  it('is released again every RELEASE_RETRY_MS until the store takes it, not left to its lease', async () => {
    vi.useFakeTimers();
    vi.setSystemTime(0); // wall time: the claim's lease runs to 61 s
    const store = awayStore();
    const kinds = new JobKinds();
    kinds.register({ kind: 'endpoint-webhook', run: async () => Promise.reject(new Unavailable('the database: ECONNREFUSED')) });
    const runner = new JobRunner(store.storage, new Clocks(new ManualClock(0)), kinds, new Running(), {});
    expect(await runner.run(job, 'actual')).toBe('unavailable');
    expect(store.released).toEqual([]);
    await vi.advanceTimersByTimeAsync(RELEASE_RETRY_MS * 2);
    expect(store.released).toEqual([]); // still away: kept, tried again
    store.back();
    await vi.advanceTimersByTimeAsync(RELEASE_RETRY_MS);
    expect(store.released).toEqual(['msg_1']);
    await vi.advanceTimersByTimeAsync(RELEASE_RETRY_MS * 3);
    expect(store.released).toEqual(['msg_1']); // once: nothing left to release
    runner.stop();
  });

  it('is dropped once its lease has run out: the claim has freed itself, and the job may be this replica\'s again under a new claim', async () => {
    vi.useFakeTimers();
    vi.setSystemTime(0);
    const store = awayStore();
    const runner = new JobRunner(store.storage, new Clocks(new ManualClock(0)), new JobKinds(), new Running(), {});
    await runner.release(job);
    await vi.advanceTimersByTimeAsync(62_000); // away past the lease's end
    store.back();
    await vi.advanceTimersByTimeAsync(RELEASE_RETRY_MS * 2);
    expect(store.released).toEqual([]);
    runner.stop();
  });
});

describe('JobRunner: a job that keeps failing', () => {
  it('is tried five times in all, then dropped: its kind and the onDropped hook are told once, with the job', async () => {
    const scheduled: number[] = [];
    let completed = 0;
    const storage = {
      jobs: {
        schedule: async (j: { due_at: number }) => void scheduled.push(j.due_at),
        complete: async () => void (completed += 1),
      },
    } as unknown as Storage;
    const dropped: string[] = [];
    const told: Array<[string, string, string]> = [];
    const kinds = new JobKinds();
    kinds.register({ kind: 'awb', run: async () => Promise.reject(new Error('a bug')), dropped: async (j) => void dropped.push(j.key) });
    const runner = new JobRunner(storage, new Clocks(new ManualClock(0)), kinds, new Running(), { onError: () => undefined, onDropped: (kind, key, client) => told.push([kind, key, client]) });
    const awb: ClaimedJob = { ...job, kind: 'awb', key: '512345678901' };
    for (let i = 0; i < 5; i += 1) await runner.run(awb, 'actual');
    // Four retries, 1, 2, 4 and 8 minutes after it failed; the fifth failure drops it.
    expect(scheduled).toEqual([61_000, 121_000, 241_000, 481_000]);
    expect(completed).toBe(1);
    expect(dropped).toEqual(['512345678901']);
    expect(told).toEqual([['awb', '512345678901', 'a']]);
    runner.stop();
  });
});
