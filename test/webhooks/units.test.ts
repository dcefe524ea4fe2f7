import { describe, expect, it } from 'vitest';
import { chaosOf, ReorderWindows, unknownChaos } from '../../src/webhooks/chaos.js';
import { cappedRetryAfterMs as retryAfterMs, nextAttemptAt, parseRetries } from '../../src/webhooks/retry.js';
import { isSecret, makeSecret } from '../../src/webhooks/secret.js';

describe('parseRetries', () => {
  it.each([
    ['0,5s,30s,2m,10m,1h,6h', [0, 5_000, 30_000, 120_000, 600_000, 3_600_000, 21_600_000]],
    ['0', [0]],
    ['1s, 2s', [1_000, 2_000]],
  ])('reads %j', (text, delays) => expect(parseRetries(text)).toEqual(delays));
  it.each(['', 'soon', '1s,,2s', '-1s'])('refuses %j', (text) => expect(parseRetries(text)).toBeUndefined());
});

describe('retryAfterMs', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('reads seconds and HTTP dates, and caps at 6 hours', () => {
    expect(retryAfterMs('30', now)).toBe(30_000);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:02:00 GMT', now)).toBe(120_000);
    expect(retryAfterMs('100000', now)).toBe(6 * 3_600_000);
    expect(retryAfterMs('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
  });
  it.each(['Thu, 01 Jan 2026 00:02:00 GMT', 'Thursday, 01-Jan-26 00:02:00 GMT', 'Thu Jan  1 00:02:00 2026'])('reads the HTTP date %j (each of RFC 9110\'s forms, in GMT)', (header) => expect(retryAfterMs(header, now)).toBe(120_000));
  it.each([null, '', 'later', '1.5', '-1', '2s', 'Mon 1', 'Mon, 1.5', 'Sun -1', 'Monkey, 5'])('ignores %j (neither whole seconds nor an HTTP date: Date.parse reads 1.5 and -1 as dates in 2001)', (header) => expect(retryAfterMs(header, now)).toBeUndefined());
});

describe('nextAttemptAt', () => {
  it('takes the next delay of the schedule, made longer (never shorter) by Retry-After', () => {
    expect(nextAttemptAt([0, 5_000, 30_000], 1, 1_000)).toBe(6_000);
    expect(nextAttemptAt([0, 5_000, 30_000], 1, 1_000, 60_000)).toBe(61_000);
    expect(nextAttemptAt([0, 5_000, 30_000], 1, 1_000, 1_000)).toBe(6_000);
    expect(nextAttemptAt([0, 5_000, 30_000], 3, 1_000)).toBeUndefined();
  });
});

describe('secrets', () => {
  it('makes whsec_ secrets of 24 bytes, the same for a seed and client', () => {
    expect(isSecret(makeSecret('a'))).toBe(true);
    expect(makeSecret('a', 's')).toBe(makeSecret('a', 's'));
    expect(makeSecret('a', 's')).not.toBe(makeSecret('b', 's'));
    expect(makeSecret('a')).not.toBe(makeSecret('a'));
  });
  it.each(['whsec_c2hvcnQ=', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'whsec_!!!'])('refuses %j', (s) => expect(isSecret(s)).toBe(false));
  // Python's base64.b64decode and Go's base64.StdEncoding refuse the first two ("Incorrect padding"); the third decodes to bytes that encode otherwise.
  it.each([
    ['25 bytes without their padding', 'whsec_BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBw'],
    ['24 bytes with padding they do not have', 'whsec_CQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJ=='],
    ['25 bytes with stray bits in the last character', 'whsec_BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBB=='],
  ])('refuses %s, which only Node would decode', (_what, s) => expect(isSecret(s)).toBe(false));
  it('takes 25 bytes with their padding', () => expect(isSecret('whsec_BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBw==')).toBe(true));
});

describe('chaos', () => {
  it('names unknown modes and orders known ones', () => {
    expect(unknownChaos(['late', 'boom'])).toEqual(['boom']);
    expect(chaosOf(['late', 'junk'], ['duplicate', 'late'])).toEqual(['duplicate', 'late']);
  });
  it('reorder windows: events of one minute are due together, newest first; a later event opens a new window', () => {
    const w = new ReorderWindows();
    expect([w.dueAt('c', 0), w.dueAt('c', 10_000), w.dueAt('c', 20_000)]).toEqual([60_000, 59_999, 59_998]);
    expect(w.dueAt('other', 0)).toBe(60_000);
    expect(w.dueAt('c', 70_000)).toBe(130_000);
  });
});
