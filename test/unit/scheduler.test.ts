import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/clock/clock.js';
import { Clocks } from '../../src/clock/clocks.js';
import { Scheduler } from '../../src/jobs/index.js';
import { EmbeddedStorage } from '../../src/store/embedded/storage.js';
import { AWB, closeOpened, opened, recorder, schedulerOn } from '../support/scheduler.js';

afterEach(closeOpened);

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

  it('tries a job that failed long after its due time (the catch-up after a stop) again a minute after it failed, not at once', async () => {
    const errors: string[] = [];
    const clock = new ManualClock(0);
    const { scheduler, schedule, storage } = await schedulerOn(clock, { onError: (_, kind, key) => errors.push(`${kind}:${key}`) });
    scheduler.register({ ...AWB, run: async () => {
      throw new Error('a fault that lasts a while');
    } });
    await schedule('awb', 'late', 10);
    clock.set(3_600_000); // the sandbox was stopped for an hour
    await scheduler.runDue();
    expect(errors).toEqual(['awb:late']);
    expect(await storage.jobs.get('awb', 'late')).toMatchObject({ due_at: 3_660_000 });
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

  it('runs at start every job overdue on a client clock kept ahead of them (a stop during its advance), webhooks as the pool makes room, each at its due time', async () => {
    const { scheduler, storage } = await schedulerOn(new ManualClock(0));
    scheduler.clocks.moveTo('c', 100_000);
    const ran: string[] = [];
    scheduler.register({ ...AWB, run: async (job, at) => void ran.push(`${job.key}@${at}`) });
    const attempt = async (job: { key: string }, at: number) => {
      await new Promise((resolve) => setTimeout(resolve, 5)); // a receiver's answer
      ran.push(`${job.key}@${at}`);
    };
    scheduler.register({ kind: 'webhook', run: attempt, concurrency: { total: 4, perClient: 2 } });
    const all: string[] = [];
    for (let i = 1; i <= 10; i++) {
      for (const kind of ['awb', 'webhook'] as const) await storage.jobs.schedule({ kind, key: `${kind}${i}`, client_id: 'c', due_at: i * 1_000 });
      all.push(`awb${i}@${i * 1_000}`, `webhook${i}@${i * 1_000}`);
    }
    await scheduler.runDue();
    await vi.waitFor(async () => expect(await storage.jobs.count()).toBe(0), { timeout: 10_000 });
    await scheduler.settle();
    expect(ran.sort()).toEqual(all.sort());
    expect(ran.filter((run) => run.startsWith('awb'))).toEqual(all.filter((run) => run.startsWith('awb')));
  });

  it("leaves another client's job that falls due at its clock after the start to its advance, while one client's overdue webhooks wait for room", async () => {
    const { scheduler, storage } = await schedulerOn(new ManualClock(0));
    scheduler.clocks.moveTo('a', 100_000);
    const ran: string[] = [];
    let answer!: () => void;
    const receiver = new Promise<void>((resolve) => (answer = resolve));
    scheduler.register({ ...AWB, run: async (job) => void ran.push(job.key) });
    scheduler.register({ kind: 'webhook', run: async (job) => void ((await receiver), ran.push(job.key)), concurrency: { total: 4, perClient: 2 } });
    for (let i = 1; i <= 5; i++) await storage.jobs.schedule({ kind: 'webhook', key: `a${i}`, client_id: 'a', due_at: i * 1_000 });
    await scheduler.runDue();
    // b's clock stands with the sandbox's, at 0: an AWB with no delay falls due there.
    await storage.jobs.schedule({ kind: 'awb', key: 'b-now', client_id: 'b', due_at: 0 });
    answer();
    await vi.waitFor(async () => expect(await storage.jobs.count('a')).toBe(0), { timeout: 10_000 });
    await scheduler.settle();
    expect(ran).toEqual(['a1', 'a2', 'a3', 'a4', 'a5']);
    await scheduler.advance('b', 0);
    expect(ran).toContain('b-now');
  });

  it('drops the due jobs of a client no longer configured without running them, tells once per client how many, and runs the others', async () => {
    const errors: string[] = [];
    const told: Array<[string, number]> = [];
    const clock = new ManualClock(0);
    const { scheduler, storage } = await schedulerOn(clock, {
      configured: (clientId) => clientId !== 'gone',
      onUnconfigured: (clientId, dropped) => told.push([clientId, dropped]),
      onError: (_, kind, key) => errors.push(`${kind}:${key}`),
    });
    const ran: string[] = [];
    const run = async (job: { key: string }) => void ran.push(job.key);
    scheduler.register({ ...AWB, run });
    scheduler.register({ kind: 'webhook', run, concurrency: { total: 4, perClient: 2 } });
    for (const [kind, key, client_id] of [['awb', 'g1', 'gone'], ['step', 'g2', 'gone'], ['webhook', 'g3', 'gone'], ['awb', 'kept', 'c'], ['webhook', 'hook', 'c']] as const) {
      await storage.jobs.schedule({ kind, key, client_id, due_at: 10 });
    }
    await storage.jobs.schedule({ kind: 'awb', key: 'later', client_id: 'gone', due_at: 5_000 });
    clock.set(1_000); // the start after the client was removed from the config
    await scheduler.runDue();
    await scheduler.settle();
    expect(ran.sort()).toEqual(['hook', 'kept']);
    expect(told).toEqual([['gone', 3]]);
    expect(errors).toEqual([]);
    expect(await storage.jobs.nextDue({ clientId: 'gone' })).toBe(5_000);
    // Its jobs that fall due later go the same way, without another line.
    clock.set(6_000);
    await scheduler.runDue();
    expect(await storage.jobs.count()).toBe(0);
    expect(told).toEqual([['gone', 3]]);
    expect(ran.sort()).toEqual(['hook', 'kept']);
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
