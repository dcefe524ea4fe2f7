import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, RealClock } from '../../src/clock/clock.js';
import { Clocks } from '../../src/clock/clocks.js';
import { Scheduler, type SchedulerOptions } from '../../src/jobs/index.js';
import { inOrder } from '../../src/jobs/numbering-order.js';
import { EmbeddedStorage } from '../../src/store/embedded/storage.js';
import type { JobKind, Storage } from '../../src/store/port.js';
import { WEBHOOK_CONCURRENCY } from '../../src/webhooks/job.js';

/** AWB jobs as tracking registers them: local work, drawing AWBs in the order claimed. */
const AWB = { kind: 'awb', drawsInOrder: true } as const;

let opened: Storage[] = [];
afterEach(async () => {
  for (const s of opened) await s.close();
  opened = [];
});

async function schedulerOn(clock: RealClock | ManualClock, options?: SchedulerOptions) {
  const storage = await EmbeddedStorage.open({ path: ':memory:', requestLogSize: 0 });
  opened.push(storage);
  const scheduler = new Scheduler(storage, clock, options);
  const schedule = (kind: JobKind, key: string, due_at: number) => storage.jobs.schedule({ kind, key, client_id: 'c', due_at });
  return { storage, scheduler, schedule };
}

async function recorder(start = 1_000) {
  const clock = new ManualClock(start);
  const parts = await schedulerOn(clock);
  const runs: Array<{ key: string; at: number; now: number }> = [];
  parts.scheduler.register({ ...AWB, run: async (job, at) => void runs.push({ key: job.key, at, now: parts.scheduler.clocks.of('c') }) });
  return { clock, runs, ...parts };
}

describe('Scheduler with a manual clock', () => {
  it('runs nothing until advanced, then every due job in time order at its own time', async () => {
    const { scheduler, schedule, storage, runs } = await recorder();
    await schedule('awb', 'b', 3_000);
    await schedule('awb', 'a', 2_000);
    await schedule('awb', 'c', 9_000);
    expect(runs).toEqual([]);
    await scheduler.advance('c', 5_000);
    expect(runs).toEqual([{ key: 'a', at: 2_000, now: 2_000 }, { key: 'b', at: 3_000, now: 3_000 }]);
    expect(await storage.jobs.count()).toBe(1);
  });

  it('runs a job once at its latest schedule, and not at all once cancelled', async () => {
    const { scheduler, schedule, storage, runs } = await recorder();
    await schedule('awb', 'a', 2_000);
    await schedule('awb', 'a', 4_000);
    await schedule('awb', 'b', 2_000);
    await storage.jobs.cancel('awb', 'b');
    await scheduler.advance('c', 10_000);
    expect(runs.map((r) => `${r.key}@${r.at}`)).toEqual(['a@4000']);
  });

  it('runs jobs that a job schedules within the same advance', async () => {
    const clock = new ManualClock(0);
    const { scheduler, schedule } = await schedulerOn(clock);
    const seen: number[] = [];
    scheduler.register({ kind: 'step', run: async (_, at) => {
      seen.push(at);
      if (at < 3_000) await schedule('step', 't', at + 1_000);
    } });
    await schedule('step', 't', 1_000);
    await scheduler.advance('c', 10_000);
    expect(seen).toEqual([1_000, 2_000, 3_000]);
    expect(scheduler.clocks.of('c')).toBe(10_000);
  });

  it('keeps running after a job throws, and reports the error', async () => {
    const errors: string[] = [];
    const { scheduler, schedule } = await schedulerOn(new ManualClock(0), { onError: (_, kind, key) => errors.push(`${kind}:${key}`) });
    const ran: string[] = [];
    scheduler.register({ ...AWB, run: async (job) => {
      if (job.key === 'bad') throw new Error('boom');
      ran.push(job.key);
    } });
    await schedule('awb', 'bad', 10);
    await schedule('awb', 'good', 20);
    await scheduler.advance('c', 100);
    expect(errors).toEqual(['awb:bad']);
    expect(ran).toEqual(['good']);
    // Tried again 1, 2, 4 and 8 minutes later, then dropped: five runs in all, however long the advance.
    await scheduler.advance('c', 365 * 86_400_000);
    expect(errors).toEqual(Array(5).fill('awb:bad'));
  });

  it('runs a job that failed once again a minute later, and then it succeeds', async () => {
    const errors: string[] = [];
    const { scheduler, schedule, storage } = await schedulerOn(new ManualClock(0), { onError: (_, kind, key) => errors.push(`${kind}:${key}`) });
    const runs: number[] = [];
    scheduler.register({ ...AWB, run: async (_job, at) => {
      runs.push(at);
      if (runs.length === 1) throw new Error('a passing fault');
    } });
    await schedule('awb', 'flaky', 10);
    await scheduler.advance('c', 100);
    expect(await storage.jobs.get('awb', 'flaky')).toMatchObject({ due_at: 60_010 });
    await scheduler.advance('c', 60_000);
    expect(runs).toEqual([10, 60_010]);
    expect(errors).toEqual(['awb:flaky']);
    expect(await storage.jobs.count()).toBe(0);
  });

  it("moves only the advanced client's clock and runs only its jobs", async () => {
    const { scheduler, storage, runs } = await recorder(0);
    await storage.jobs.schedule({ kind: 'awb', key: 'mine', client_id: 'c', due_at: 2_000 });
    await storage.jobs.schedule({ kind: 'awb', key: 'theirs', client_id: 'other', due_at: 2_000 });
    await scheduler.advance('c', 5_000);
    expect(runs.map((r) => r.key)).toEqual(['mine']);
    expect(scheduler.clocks.of('c')).toBe(5_000);
    expect(scheduler.clocks.of('other')).toBe(0);
    expect(await storage.jobs.nextDue({ clientId: 'other' })).toBe(2_000);
  });

  it('moves every clock by ms when advancing all, even a client whose earlier advance is still running, or named by two tokens', async () => {
    const storage = await EmbeddedStorage.open({ path: ':memory:', requestLogSize: 0 });
    opened.push(storage);
    const scheduler = new Scheduler(storage, new Clocks(new ManualClock(0), ['c', 'd', 'c']));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    scheduler.register({ ...AWB, run: () => held });
    await storage.jobs.schedule({ kind: 'awb', key: 'x', client_id: 'd', due_at: 0 });
    const earlier = scheduler.advance('d', 0); // runs d's job, held
    const all = scheduler.advanceAll(1_000);
    await new Promise((resolve) => setTimeout(resolve, 20)); // the sandbox's own clock has moved meanwhile
    release();
    await Promise.all([earlier, all]);
    expect([scheduler.clocks.of('c'), scheduler.clocks.of('d'), scheduler.clocks.now()]).toEqual([1_000, 1_000, 1_000]);
  });

  it('runs at start what is due on each client clock, and nothing of a client whose clock is behind', async () => {
    const { scheduler, storage, runs } = await recorder(0);
    scheduler.clocks.moveTo('c', 10_000);
    await storage.jobs.schedule({ kind: 'awb', key: 'ahead', client_id: 'c', due_at: 9_000 });
    await storage.jobs.schedule({ kind: 'awb', key: 'behind', client_id: 'other', due_at: 9_000 });
    await scheduler.runDue();
    expect(runs.map((r) => `${r.key}@${r.at}`)).toEqual(['ahead@9000']);
  });
});

describe('Scheduler with a real clock', () => {
  it('runs a due job by itself, sped up by the clock speed, stamped with the time it ran', async () => {
    const clock = new RealClock(1_000);
    const { scheduler, schedule } = await schedulerOn(clock);
    const done = new Promise<{ at: number; now: number }>((resolve) => scheduler.register({ ...AWB, run: async (_, at) => resolve({ at, now: clock.now() }) }));
    const due = clock.now() + 60_000; // one simulated minute: 60 real ms
    await schedule('awb', 'x', due);
    const { at, now } = await done;
    expect(at).toBeGreaterThanOrEqual(due);
    expect(at).toBeLessThanOrEqual(now);
    await scheduler.stop();
  });

  it('runs jobs scheduled while it drains at their due time, waking once for them rather than looking up the store for each', async () => {
    const clock = new RealClock(1_000);
    const { scheduler, schedule, storage } = await schedulerOn(clock);
    let lookups = 0;
    const nextDue = storage.jobs.nextDue.bind(storage.jobs);
    storage.jobs.nextDue = (filter) => ((lookups += 1), nextDue(filter));
    const ran: Array<{ key: string; at: number }> = [];
    let lookupsWhileScheduling = -1;
    const all = new Promise<void>((resolve) =>
      scheduler.register({ ...AWB, run: async (job, at) => {
        ran.push({ key: job.key, at });
        if (job.key === 'first') {
          const before = lookups;
          // 20 jobs falling due one simulated minute (60 real ms) later, scheduled while this drain runs.
          for (let i = 0; i < 20; i += 1) await schedule('awb', `later-${i}`, clock.now() + 60_000);
          lookupsWhileScheduling = lookups - before;
        }
        if (ran.length === 21) resolve();
      } }),
    );
    await schedule('awb', 'first', clock.now() + 1_000);
    await all;
    expect(lookupsWhileScheduling).toBe(0);
    expect(ran.map((r) => r.key).sort()).toEqual(['first', ...Array.from({ length: 20 }, (_, i) => `later-${i}`)].sort());
    for (const { at } of ran.slice(1)) expect(at).toBeLessThanOrEqual(clock.now());
    await scheduler.stop();
  });

  it('catches up on jobs that fell due at many different times in batches, in due order, not one due time per claim', async () => {
    const clock = new RealClock(1_000);
    const { scheduler, storage } = await schedulerOn(clock);
    let claims = 0;
    let lookups = 0;
    const claim = storage.jobs.claim.bind(storage.jobs);
    storage.jobs.claim = (options) => ((claims += 1), claim(options));
    const nextDue = storage.jobs.nextDue.bind(storage.jobs);
    storage.jobs.nextDue = (filter) => ((lookups += 1), nextDue(filter));
    const ran: string[] = [];
    const all = new Promise<void>((resolve) =>
      scheduler.register({ ...AWB, run: async (job) => {
        ran.push(job.key);
        if (ran.length === 200) resolve();
      } }),
    );
    // 200 AWBs that fell due over the last 200 ms, each at its own millisecond, as under a load of creates.
    const now = clock.now();
    await storage.transaction(async (tx) => {
      for (let i = 0; i < 200; i += 1) await tx.jobs.schedule({ kind: 'awb', key: `k${String(i).padStart(3, '0')}`, client_id: 'c', due_at: now - 200 + i });
    });
    await all;
    expect(ran).toEqual(Array.from({ length: 200 }, (_, i) => `k${String(i).padStart(3, '0')}`));
    // Work claims take 8 of a client's jobs at a time (and one for the webhook lane each),
    // with one look-up of the earliest due time before each: about 50 and 25, not 400 and 200.
    expect(claims).toBeLessThanOrEqual(60);
    expect(lookups).toBeLessThanOrEqual(30);
    await scheduler.stop();
  });

  it("runs another client's due job beside one client's backlog, not after it, also one that falls due while the backlog drains", async () => {
    const clock = new RealClock(1_000);
    const { scheduler, storage } = await schedulerOn(clock);
    const ran: string[] = [];
    let scheduledLate = false;
    const done = new Promise<void>((resolve) =>
      scheduler.register({ ...AWB, run: async (job) => {
        ran.push(job.key);
        // Once A's backlog is running, B gets a job due now: after the wake-up that found the backlog.
        if (!scheduledLate && job.key === 'a-0100') {
          scheduledLate = true;
          await storage.jobs.schedule({ kind: 'awb', key: 'b-late', client_id: 'b', due_at: clock.now() });
        }
        if (ran.length === 2_002) resolve();
      } }),
    );
    // Client A: 2,000 AWBs that fell due over the last 2 s (a load of creates); client B: one, due now.
    const now = clock.now();
    await storage.transaction(async (tx) => {
      for (let i = 0; i < 2_000; i += 1) await tx.jobs.schedule({ kind: 'awb', key: `a-${String(i).padStart(4, '0')}`, client_id: 'a', due_at: now - 2_000 + i });
      await tx.jobs.schedule({ kind: 'awb', key: 'b-now', client_id: 'b', due_at: now });
    });
    await done;
    // A claim takes at most 8 of a client's jobs: B's come within a claim or two of being due, not after A's 2,000.
    expect(ran.indexOf('b-now')).toBeLessThan(20);
    expect(ran.indexOf('b-late') - ran.indexOf('a-0100')).toBeLessThan(30);
    // A's still run in due order.
    expect(ran.filter((key) => key.startsWith('a-'))).toEqual(Array.from({ length: 2_000 }, (_, i) => `a-${String(i).padStart(4, '0')}`));
    await scheduler.stop();
  });

  it("runs another client's job that just fell due in the first claim beside six clients' backlogs: every client's first job before any client's second", async () => {
    const clock = new RealClock(1_000);
    const { scheduler, storage } = await schedulerOn(clock);
    const ran: string[] = [];
    const heavy = ['a', 'b', 'c', 'd', 'e', 'f'];
    const done = new Promise<void>((resolve) =>
      scheduler.register({ ...AWB, run: async (job) => {
        ran.push(job.key);
        if (ran.length === heavy.length * 500 + 1) resolve();
      } }),
    );
    const now = clock.now();
    await storage.transaction(async (tx) => {
      for (const client of heavy) for (let i = 0; i < 500; i += 1) await tx.jobs.schedule({ kind: 'awb', key: `${client}-${i}`, client_id: client, due_at: now - 2_000 + i });
      await tx.jobs.schedule({ kind: 'awb', key: 'z-now', client_id: 'z', due_at: now });
    });
    await done;
    // A claim takes 32 jobs; in rounds, z's is among the first seven (each client's earliest), not after 3,000.
    expect(ran.indexOf('z-now')).toBeLessThan(32);
    for (const client of heavy) expect(ran.filter((key) => key.startsWith(`${client}-`))).toEqual(Array.from({ length: 500 }, (_, i) => `${client}-${i}`));
    await scheduler.stop();
  });

  it('queues no more wake-ups while one drains: the webhook attempts that end during a long drain do not each add a drain behind it', async () => {
    const clock = new RealClock(1_000);
    const { scheduler, storage } = await schedulerOn(clock);
    let ran = 0;
    const total = 3_000 + 300;
    const done = new Promise<void>((resolve) => {
      const count = async () => {
        ran += 1;
        if (ran === total) resolve();
      };
      scheduler.register({ ...AWB, run: count });
      scheduler.register({ kind: 'webhook', run: count, concurrency: WEBHOOK_CONCURRENCY });
    });
    let lookups = 0;
    const nextDue = storage.jobs.nextDue.bind(storage.jobs);
    storage.jobs.nextDue = (filter) => {
      lookups += 1;
      return nextDue(filter);
    };
    const now = clock.now();
    await storage.transaction(async (tx) => {
      for (let i = 0; i < 3_000; i += 1) await tx.jobs.schedule({ kind: 'awb', key: `o-${i}`, client_id: 'c', due_at: now - 3_000 + i });
      for (let i = 0; i < 300; i += 1) await tx.jobs.schedule({ kind: 'webhook', key: `d-${i}`, client_id: 'c', due_at: now - 3_000 + i * 10 });
    });
    await done;
    const atEnd = lookups;
    await new Promise((resolve) => setTimeout(resolve, 300));
    // After the last job, the drain's own last look and its re-arm: not one drain per attempt that ended.
    expect(lookups - atEnd).toBeLessThan(5);
    await scheduler.stop();
  });

  it('jumps one client ahead: its jobs due by the target run at once, stamped with their due time; another client waits', async () => {
    const clock = new RealClock(1);
    const { scheduler, storage } = await schedulerOn(clock);
    const ran: Array<{ key: string; at: number }> = [];
    scheduler.register({ ...AWB, run: async (job, at) => void ran.push({ key: job.key, at }) });
    const due = clock.now() + 3_600_000;
    await storage.jobs.schedule({ kind: 'awb', key: 'jumped', client_id: 'c', due_at: due });
    await storage.jobs.schedule({ kind: 'awb', key: 'waits', client_id: 'other', due_at: due });
    const before = scheduler.clocks.of('c');
    await scheduler.advance('c', 7_200_000);
    expect(ran).toEqual([{ key: 'jumped', at: due }]);
    expect(scheduler.clocks.of('c') - before).toBeGreaterThanOrEqual(7_200_000);
    expect(scheduler.clocks.of('other')).toBeLessThan(due);
    await scheduler.stop();
  });
});

describe('Scheduler on a store that other processes share', () => {
  it("runs a client's due jobs side by side with a real clock, yet draws in due order and runs one order's jobs in order", async () => {
    const clock = new RealClock(1_000);
    const storage = await EmbeddedStorage.open({ path: ':memory:', requestLogSize: 0 });
    opened.push(storage);
    // What makes the scheduler treat the store as shared (PostgreSQL's jobs repository has it).
    storage.jobs.heldElsewhere = async () => undefined;
    const scheduler = new Scheduler(storage, clock);
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    let running = 0;
    let mostAtOnce = 0;
    const drawn: string[] = [];
    const ran: string[] = [];
    const all = new Promise<void>((resolve) => {
      const handler = (delay: (i: number) => number) => async (job: { key: string; kind: string }) => {
        running += 1;
        mostAtOnce = Math.max(mostAtOnce, running);
        const i = Number(job.key.slice(1));
        // Later jobs reach their draw first: without a numbering order they would draw in reverse.
        await sleep(delay(i));
        if (job.kind === 'awb') await inOrder(async () => void drawn.push(job.key));
        ran.push(`${job.kind}:${job.key}`);
        running -= 1;
        if (ran.length === 17) resolve();
      };
      scheduler.register({ ...AWB, run: handler((i) => 2 * (16 - i)) });
      scheduler.register({ kind: 'step', run: handler(() => 0) });
    });
    const now = clock.now();
    await storage.transaction(async (tx) => {
      for (let i = 0; i < 16; i += 1) await tx.jobs.schedule({ kind: 'awb', key: `k${String(i).padStart(2, '0')}`, client_id: 'c', due_at: now - 100 + i });
      // A job of the same order as k03, due with it: it runs after k03's AWB job, not beside it.
      await tx.jobs.schedule({ kind: 'step', key: 'k03', client_id: 'c', due_at: now - 100 + 3 });
    });
    await all;
    expect(mostAtOnce).toBe(3); // ROW_PARALLEL: a client keeps some background connections to the others
    expect(drawn).toEqual(Array.from({ length: 16 }, (_, i) => `k${String(i).padStart(2, '0')}`));
    expect(ran.indexOf('step:k03')).toBeGreaterThan(ran.indexOf('awb:k03'));
    await scheduler.stop();
  });
});

describe('Scheduler turns on the event loop', () => {
  /**
   * Three clients' advances at once over 300 due jobs each, every job taking 0.25 ms of a
   * wall clock the test keeps; a chain of setImmediate ticks counts the jobs run in each
   * turn of the event loop (what a request arriving meanwhile would wait behind), each
   * tick taking `otherWorkMs` of that clock (the requests served meanwhile).
   */
  async function jobsPerTurn(otherWorkMs = 0) {
    const storage = await EmbeddedStorage.open({ path: ':memory:', requestLogSize: 0 });
    opened.push(storage);
    let wall = 0;
    const scheduler = new Scheduler(storage, new Clocks(new ManualClock(0), ['a', 'b', 'c']), { wallClock: () => wall });
    let ran = 0;
    scheduler.register({ ...AWB, run: async () => {
      wall += 0.25;
      ran += 1;
    } });
    for (const client of ['a', 'b', 'c']) for (let i = 0; i < 300; i++) await storage.jobs.schedule({ kind: 'awb', key: `${client}${i}`, client_id: client, due_at: 1_000 + i });
    const perTurn: number[] = [];
    let seen = 0;
    let ticking = true;
    const tick = () => {
      wall += otherWorkMs;
      perTurn.push(ran - seen);
      seen = ran;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    await Promise.all(['a', 'b', 'c'].map((client) => scheduler.advance(client, 10_000)));
    ticking = false;
    return { ran, perTurn: perTurn.filter((n) => n > 0) };
  }

  it("runs the drains at once within one shared turn, not a turn each: at most 5 ms of jobs plus the batch each drain is in", async () => {
    const { ran, perTurn } = await jobsPerTurn();
    expect(ran).toBe(900);
    // 5 ms is 20 jobs of 0.25 ms; each of the three drains may end the batch it is in (8 of its client's jobs).
    expect(Math.max(...perTurn)).toBeLessThanOrEqual(20 + 3 * 8);
    // And more than a batch each a turn (an advance runs a due time's jobs a batch: one job here): a turn is spent, not a batch.
    expect(Math.max(...perTurn)).toBeGreaterThanOrEqual(20);
  });

  it('takes a turn as long as the requests took between its turns, from 5 to 15 ms: the loop shared about half and half under load', async () => {
    const busy = await jobsPerTurn(10);
    expect(busy.ran).toBe(900);
    // 10 ms of other work a turn: 10 ms of jobs, 40 of 0.25 ms, plus the batch each drain is in.
    expect(Math.max(...busy.perTurn)).toBeGreaterThanOrEqual(40);
    expect(Math.max(...busy.perTurn)).toBeLessThanOrEqual(40 + 3 * 8);
    // 100 ms of other work a turn: the jobs' turn stops at 15 ms (60 jobs).
    const swamped = await jobsPerTurn(100);
    expect(Math.max(...swamped.perTurn)).toBeGreaterThanOrEqual(60);
    expect(Math.max(...swamped.perTurn)).toBeLessThanOrEqual(60 + 3 * 8);
  });
});
