import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { toApiError } from '../../src/http/errors.js';
import { Unavailable } from '../../src/shared/index.js';
import { Reachability } from '../../src/store/postgres/reachability.js';
import { statementFailures } from '../../src/store/open.js';

const failure = (code: string, message = 'failed') => Object.assign(new Error(message), { code });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let reach: Reachability | undefined;
afterEach(() => reach?.stop());

describe("PostgreSQL's reachability, as health shows it", () => {
  it('shows the latest failure\'s code and the first failure\'s time; an answer ends the outage', async () => {
    reach = new Reachability({ url: 'postgres://unused', requestLogSize: 10 });
    expect(reach.translate(failure('57P01', 'terminating connection due to administrator command'))).toBeInstanceOf(Unavailable);
    const first = reach.health();
    expect(first).toMatchObject({ writable: false, error: '57P01' });
    await sleep(5);
    reach.translate(failure('ECONNREFUSED'));
    expect(reach.health()).toEqual({ writable: false, error: 'ECONNREFUSED', since: first.since });
    reach.answered();
    expect(reach.health()).toEqual({ writable: true });
  });

  it('tells of an outage its own check confirmed, once as it begins and once as it ends; not of one statement failing between answers', async () => {
    const told: Array<{ ok: boolean; error: string }> = [];
    reach = new Reachability({ url: 'postgres://unused', requestLogSize: 10, onHealth: ({ ok, error }) => told.push({ ok, error }) });
    // Passing failures under load (a statement timeout, a reset connection), each ended by the next answer: many a second, none told.
    for (let i = 0; i < 100; i += 1) {
      reach.translate(failure(i % 2 === 0 ? '57014' : 'ECONNRESET'));
      reach.answered();
    }
    expect(told).toEqual([]);
    // An outage: the check fails as the statements do, and is told once, however many fail meanwhile.
    let down = true;
    reach.watch(async () => {
      if (down) throw failure('ECONNREFUSED');
    });
    reach.translate(failure('57P01'));
    for (let i = 0; i < 60 && told.length === 0; i += 1) await sleep(100);
    for (let i = 0; i < 10; i += 1) reach.translate(failure('ECONNREFUSED'));
    down = false;
    for (let i = 0; i < 60 && told.length < 2; i += 1) await sleep(100);
    expect(told).toEqual([
      { ok: false, error: 'ECONNREFUSED' },
      { ok: true, error: 'ECONNREFUSED' },
    ]);
    // A refused write is told at once: the database answers reads, so no check fails.
    reach.translate(failure('25006'));
    reach.answered(true);
    expect(told.slice(2)).toEqual([
      { ok: false, error: '25006' },
      { ok: true, error: '25006' },
    ]);
  });

  it('keeps a refused write (read-only, disk full) through the reads answered after it: until a write is taken, or 30 s without another', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      reach = new Reachability({ url: 'postgres://unused', requestLogSize: 10 });
      reach.translate(failure('25006', 'cannot execute INSERT in a read-only transaction'));
      reach.answered();
      expect(reach.health()).toMatchObject({ writable: false, error: '25006' });
      reach.answered(true);
      expect(reach.health()).toEqual({ writable: true });

      // A statement that changed rows on its own (a clock saved, a job claimed) is a write taken too; a SELECT is not.
      reach.translate(failure('25006'));
      await reach.run(async () => ({ command: 'SELECT', rows: [{}], rowCount: 1 }));
      await reach.run(async () => ({ command: 'UPDATE', rows: [], rowCount: 0 })); // a claim that found nothing due: nothing written
      expect(reach.health()).toMatchObject({ writable: false, error: '25006' });
      await reach.run(async () => ({ command: 'UPDATE', rows: [], rowCount: 1 }));
      expect(reach.health()).toEqual({ writable: true });

      reach.translate(failure('53100', 'could not extend file: No space left on device'));
      vi.advanceTimersByTime(29_000);
      reach.answered();
      expect(reach.health()).toMatchObject({ writable: false, error: '53100' });
      vi.advanceTimersByTime(1_000);
      reach.answered();
      expect(reach.health()).toEqual({ writable: true });
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps a refused write through another failure after it: a read answered then does not end it', () => {
    const told: boolean[] = [];
    reach = new Reachability({ url: 'postgres://unused', requestLogSize: 10, onHealth: ({ ok }) => told.push(ok) });
    for (let round = 0; round < 3; round += 1) {
      reach.translate(failure('25006'));
      reach.answered();
      reach.translate(failure('57014')); // a statement timeout on the standby, under load
      reach.answered();
    }
    expect(reach.health()).toMatchObject({ writable: false, error: '57014' });
    expect(told).toEqual([false]);
  });

  it("tells of a statement the database failed while answering others (a lock held past the statement timeout), with what it means; not of a connection's failure", () => {
    const told: Array<[string, string]> = [];
    reach = new Reachability({ url: 'postgres://unused', requestLogSize: 10, onStatementFailure: (code, meaning) => told.push([code, meaning]) });
    reach.translate(failure('57014'));
    reach.answered();
    reach.translate(failure('ECONNRESET'));
    reach.translate(failure('57P01'));
    expect(told).toEqual([['57014', expect.stringContaining('a lock held by another session')]]);
  });

  it('logs the first statement failure at once and counts those of the minute after it in one more line', () => {
    vi.useFakeTimers();
    onTestFinished(() => void vi.useRealTimers());
    const lines: Array<[object, string]> = [];
    const failed = statementFailures({ warn: (fields: object, message: string) => void lines.push([fields, message]) } as never, 60_000);
    const firstAt = new Date().toISOString();
    for (let i = 0; i < 5; i += 1) failed('57014', 'a statement timeout');
    expect(lines).toEqual([[{ error: '57014' }, 'a database statement failed (57014, a statement timeout): a request it was for answered 503; background work tries again later']]);
    vi.advanceTimersByTime(60_000);
    expect(lines[1]).toEqual([{ failures: 4, first_at: firstAt }, '4 more database statements failed in the minute after the first']);
    failed('57014', 'a statement timeout');
    expect(lines).toHaveLength(3);
  });

  it('an idle replica learns of an outage, and of its end, from its own check of the database', async () => {
    reach = new Reachability({ url: 'postgres://unused', requestLogSize: 10 });
    let down = true;
    reach.watch(async () => {
      if (down) throw failure('ECONNREFUSED');
    });
    for (let i = 0; i < 30 && reach.health().writable; i += 1) await sleep(100);
    expect(reach.health()).toMatchObject({ writable: false, error: 'ECONNREFUSED' });
    down = false;
    for (let i = 0; i < 30 && !reach.health().writable; i += 1) await sleep(100);
    expect(reach.health()).toEqual({ writable: true });
  });

  it('a GET the database cannot serve says it could not read; a change, that nothing was saved', () => {
    reach = new Reachability({ url: 'postgres://unused', requestLogSize: 10 });
    const error = reach.translate(failure('ECONNREFUSED'));
    const read = toApiError(error, 'GET');
    const write = toApiError(error, 'POST');
    expect(read.status).toBe(503);
    expect(read.message).toBe('The sandbox cannot read from its database right now (the database: ECONNREFUSED). Retry shortly.');
    expect(write.status).toBe(503);
    expect(write.message).toMatch(/cannot save changes right now \(the database: ECONNREFUSED\); nothing was saved/);
    expect(read.headers['Retry-After']).toBe('5');
  });
});
