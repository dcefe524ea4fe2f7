import { describe, expect, it } from 'vitest';
import { asJsonWithin, EXCERPT_BYTES } from '../../src/webhooks/send.js';

const jsonBytes = (text: string) => Buffer.byteLength(JSON.stringify(text)) - 2;

describe('asJsonWithin (the answer excerpt kept with each webhook attempt)', () => {
  it('keeps a plain answer as it is', () => {
    expect(asJsonWithin('{"ok":true}\n', EXCERPT_BYTES)).toBe('{"ok":true}\n');
  });

  it.each([
    ['1 KiB of NUL bytes (each a 6-byte escape in JSON)', '\u0000'.repeat(1024)],
    ['1 KiB of quotes and backslashes', '"\\'.repeat(512)],
    ['1 KiB of invalid UTF-8, decoded as U+FFFD', Buffer.alloc(1024, 0xff).toString('utf8')],
    ['emoji', '😀'.repeat(400)],
  ])('writes at most 1 KiB of JSON for %s', (_case, text) => {
    const kept = asJsonWithin(text, EXCERPT_BYTES);
    expect(jsonBytes(kept)).toBeLessThanOrEqual(EXCERPT_BYTES);
    expect(jsonBytes(kept)).toBeGreaterThan(EXCERPT_BYTES - 8);
  });

  it('shows control characters but tab and line breaks as U+FFFD, and never splits a character', () => {
    expect(asJsonWithin('a\u0000b\tc\r\nd\u007f', 100)).toBe('a\uFFFDb\tc\r\nd\uFFFD');
    expect(asJsonWithin('😀😀', 5)).toBe('😀');
  });
});
