import { describe, expect, it } from 'vitest';
import { escapeXml } from '../../src/report/junit.js';

describe('escapeXml (JUnit report text)', () => {
  it('escapes the markup characters', () => {
    expect(escapeXml(`a<b>&"c'`)).toBe('a&lt;b&gt;&amp;&quot;c&apos;');
  });

  it('drops the characters XML 1.0 cannot hold: controls, U+FFFE, U+FFFF and lone surrogates', () => {
    expect(escapeXml('r\uffff\ufffe\u0001\u001f\ud800x\udc00y')).toBe('rxy');
  });

  it('keeps tabs, line ends and characters outside the BMP (a surrogate pair)', () => {
    expect(escapeXml('a\tb\nc\rd 📦 ü')).toBe('a\tb\nc\rd 📦 ü');
  });
});
