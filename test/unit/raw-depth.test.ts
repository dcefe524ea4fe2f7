import { describe, expect, it } from 'vitest';
import { checkRawDepth, TooDeep } from '../../src/http/depth.js';

const raw = (text: string) => Buffer.from(text);

describe('checkRawDepth (before a body is parsed)', () => {
  it('lets through bodies nested up to the limit, brackets inside strings not counted', () => {
    expect(() => checkRawDepth(raw(`${'['.repeat(64)}${']'.repeat(64)}`))).not.toThrow();
    expect(() => checkRawDepth(raw(JSON.stringify({ note: '[['.repeat(500), quoted: 'a \\" [{[{' })))).not.toThrow();
  });

  it('refuses a body nested past the limit, however long, without parsing it', () => {
    expect(() => checkRawDepth(raw(`${'['.repeat(65)}${']'.repeat(65)}`))).toThrow(TooDeep);
    expect(() => checkRawDepth(raw(`{"a":${'['.repeat(500_000)}`))).toThrow(TooDeep);
  });
});
