import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { backgroundFailures, Unavailable } from '../../src/shared/index.js';
import { connectionErrors } from '../../src/store/open.js';

const unavailable = () => new Unavailable('The sandbox cannot save changes right now (the database: ECONNREFUSED); nothing was saved. Retry shortly.');

function logged() {
  const lines: Array<{ level: number; msg: string; err?: { stack?: string }; failures?: number; clients?: string[] }> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { lines, logger };
}

describe('background failures', () => {
  it('warns at once of the first failure the store explains, without a stack, and counts the rest of the window in one more warning naming their clients', async () => {
    const { lines, logger } = logged();
    const failed = backgroundFailures(logger, 50);
    const firstAt = new Date().toISOString();
    failed('request journal', unavailable(), 'requests were not journaled', { client: 'acme' });
    const afterFirst = Date.now();
    for (const client of ['acme', 'bolt', 'bolt']) failed('request journal', unavailable(), 'requests were not journaled', { client });
    failed('scheduled job', unavailable(), 'jobs stay due and run once it is back');
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [40, 'request journal: requests were not journaled, the store being unavailable'],
      [40, 'scheduled job: jobs stay due and run once it is back, the store being unavailable'],
    ]);
    expect(lines[0]!.err).toBeUndefined();
    await new Promise((r) => setTimeout(r, 80));
    expect(lines.slice(2)).toEqual([expect.objectContaining({ level: 40, msg: 'request journal: 3 more failed in the minute after the first, while the store was unavailable (clients acme, bolt)', failures: 3, clients: ['acme', 'bolt'] })]);
    // The first failure's time, not the summary's (50 ms and more after it).
    const first = Date.parse((lines[2] as { first_at?: string }).first_at!);
    expect(first).toBeGreaterThanOrEqual(Date.parse(firstAt));
    expect(first).toBeLessThanOrEqual(afterFirst);
    // A new window starts with a warning of its own.
    failed('request journal', unavailable(), 'requests were not journaled', { client: 'acme' });
    expect(lines).toHaveLength(4);
  });

  it('logs any other failure as an error with its stack, each time', () => {
    const { lines, logger } = logged();
    const failed = backgroundFailures(logger, 50);
    for (let i = 0; i < 3; i += 1) failed('request journal', new TypeError('a bug'), 'requests were not journaled');
    expect(lines).toHaveLength(3);
    expect(lines.every((l) => l.level === 50 && l.msg === 'request journal failed' && l.err?.stack?.includes('TypeError: a bug'))).toBe(true);
  });

  it("warns once, without a stack, of a database connection an outage dropped, and still logs any other connection error as an error", () => {
    const { lines, logger } = logged();
    const onError = connectionErrors(logger);
    const shutdown = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    for (let i = 0; i < 5; i += 1) onError(shutdown);
    onError(Object.assign(new Error('password authentication failed for user "sandbox"'), { code: '28P01' }));
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [40, 'database connection: a connection was dropped (it is made again when needed), the store being unavailable'],
      [50, 'database connection failed'],
    ]);
    expect(lines[0]).toMatchObject({ error: '57P01: terminating connection due to administrator command' });
    expect(lines[0]!.err).toBeUndefined();
    expect(lines[1]!.err?.stack).toContain('password authentication failed');
  });
});
