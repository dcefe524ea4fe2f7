import { afterEach, describe, expect, it, vi } from 'vitest';
import { RealClock } from '../../src/clock/clock.js';
import { Scheduler } from '../../src/jobs/index.js';
import { inOrder } from '../../src/jobs/numbering-order.js';
import { EmbeddedStorage } from '../../src/store/embedded/storage.js';
import { WEBHOOK_CONCURRENCY } from '../../src/webhooks/job.js';
import { AWB, closeOpened, opened, schedulerOn } from '../support/scheduler.js';

afterEach(closeOpened);

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

  it("runs a client's AWB as it falls due while its webhook attempts fill its share of the pool (a silent receiver), not once one of them ends", async () => {
    const clock = new RealClock(1_000);
    const { scheduler, schedule } = await schedulerOn(clock);
    let answer!: () => void;
    const silent = new Promise<void>((resolve) => (answer = resolve));
    let attempts = 0;
    scheduler.register({ kind: 'webhook', run: async () => ((attempts += 1), await silent), concurrency: { total: 8, perClient: 2 } });
    const awb = new Promise<true>((resolve) => scheduler.register({ ...AWB, run: async () => resolve(true) }));
    for (const key of ['h1', 'h2', 'h3']) await schedule('webhook', key, clock.now());
    await vi.waitFor(() => expect(attempts).toBe(2), { timeout: 10_000 });
    await schedule('awb', 'x', clock.now() + 60_000); // one simulated minute: 60 real ms
    const ran = await Promise.race([awb, new Promise<false>((resolve) => setTimeout(() => resolve(false), 3_000))]);
    answer();
    expect(ran).toBe(true);
    expect(attempts).toBe(2); // the third attempt still waits for room
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

  it('wakes for a job of a client this replica lacks when it is due here (left to the others a while), not at its due time for nothing', async () => {
    const clock = new RealClock(1);
    // Client c is one this replica lacks: its jobs are left to the replicas that have it for 300 ms.
    const { scheduler, schedule, storage } = await schedulerOn(clock, { has: (client) => client !== 'c', leaveToOthersMs: 300 });
    let lookups = 0;
    const nextDue = storage.jobs.nextDue.bind(storage.jobs);
    storage.jobs.nextDue = (filter) => ((lookups += 1), nextDue(filter));
    const ran = new Map<string, (lookupsThen: number) => void>();
    const runs = (key: string) => new Promise<number>((resolve) => ran.set(key, resolve));
    scheduler.register({ ...AWB, run: async (job) => ran.get(job.key)?.(lookups) });
    // The first of c's jobs is met at its due time, given back, and run 300 ms later.
    const first = runs('first');
    await schedule('awb', 'first', clock.now());
    await first;
    await new Promise((resolve) => setTimeout(resolve, 50)); // its drain ended

    const second = runs('second');
    const due = clock.now() + 50;
    await schedule('awb', 'second', due);
    const before = lookups;
    const lookupsThen = await second;
    expect(clock.now()).toBeGreaterThanOrEqual(due + 300);
    // One wake-up, 300 ms after the due time, and its drain's look before its claim: no wake-up at the due time that found nothing.
    expect(lookupsThen - before).toBe(1);
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

  it('stamps a job due within a jump with its due time, also one falling due on the running clock while the jump waits for an attempt in flight', async () => {
    const clock = new RealClock(3_600); // an hour a real second: a real ms is 3.6 s
    const { scheduler, storage } = await schedulerOn(clock);
    const ran: Array<{ key: string; at: number }> = [];
    const due = clock.now() + 3_600_000;
    scheduler.register({ ...AWB, run: async (job, at) => void ran.push({ key: job.key, at }) });
    scheduler.register({ kind: 'webhook', concurrency: WEBHOOK_CONCURRENCY, run: async (job, at) => {
      // An attempt that waits on its receiver for 300 real ms (18 minutes of the clock), having made a step due a minute later.
      await storage.jobs.schedule({ kind: 'step', key: 'after', client_id: 'c', due_at: at + 60_000 });
      await new Promise((resolve) => setTimeout(resolve, 300));
      ran.push({ key: job.key, at });
    } });
    scheduler.register({ kind: 'step', run: async (job, at) => void ran.push({ key: job.key, at }) });
    await storage.jobs.schedule({ kind: 'webhook', key: 'hook', client_id: 'c', due_at: due });
    await scheduler.advance('c', 86_400_000);
    expect(ran).toEqual([{ key: 'hook', at: due }, { key: 'after', at: due + 60_000 }]);
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

  it('on stop: claims nothing more, lets the jobs running finish (a pooled one too) and gives back at once those claimed but not started, unrun', async () => {
    const clock = new RealClock(1_000);
    const { scheduler, schedule, storage } = await schedulerOn(clock);
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const ran: string[] = [];
    let running = 0;
    let bothRunning!: () => void;
    const started = new Promise<void>((resolve) => (bothRunning = resolve));
    const hold = async (key: string): Promise<void> => {
      ran.push(key);
      if (++running === 2) bothRunning();
      await answered;
    };
    // 'a' and 'b' are one claim of local work, run one after another; 'w' waits on the outside, in the pool.
    scheduler.register({ ...AWB, run: (job) => (job.key === 'a' ? hold(job.key) : (ran.push(job.key), Promise.resolve())) });
    scheduler.register({ kind: 'webhook', concurrency: WEBHOOK_CONCURRENCY, run: (job) => hold(job.key) });
    const due = clock.now();
    await schedule('awb', 'a', due);
    await schedule('awb', 'b', due);
    await schedule('webhook', 'w', due);
    await started;
    const stopped = scheduler.stop();
    await schedule('awb', 'c', due); // scheduled after the stop: never claimed here
    answer();
    await stopped;
    expect(ran.sort()).toEqual(['a', 'w']);
    // The two that ran are done; 'b' (claimed, not started) and 'c' are free for another worker now, not after a lease.
    const other = await storage.jobs.claim({ until: clock.now(), limit: 10, owner: 'another-replica', leaseMs: 60_000 });
    expect(other.map((j) => j.key).sort()).toEqual(['b', 'c']);
  });
});
