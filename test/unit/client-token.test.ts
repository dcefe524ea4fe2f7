import { describe, expect, it } from 'vitest';
import { hideToken, tokenValue } from '../../src/client/flags.js';
import { ClientRegistry } from '../../src/clients/registry.js';

describe("a client command's --token", () => {
  it('takes every token the sandbox takes (Latin-1 too), and refuses those it refuses', () => {
    for (const token of ['sbx_3f0c9a', 'pässwort', 'tökenÖ1']) {
      expect(tokenValue(token)).toBe(token);
      expect(() => new ClientRegistry([{ token }])).not.toThrow();
    }
    for (const token of ['a b', '令牌', 'tok\r\nX-Injected: 1', 'tok\u0085en']) {
      expect(() => tokenValue(token)).toThrow(/visible text without spaces/);
      expect(() => new ClientRegistry([{ token }])).toThrow(/never authenticate/);
    }
  });

  it('is left out of a refusal commander would quote it in', () => {
    let written = '';
    hideToken("error: option '--token <token>' argument 'my secret' is invalid. a token is visible text\n", (text) => (written += text));
    expect(written).toBe("error: option '--token <token>' is invalid (the value is not shown). a token is visible text\n");
  });
});

describe("a Content-Type's charset", () => {
  it('is read from a header content-type cannot parse, and an empty one is none', async () => {
    const { charsetOf } = await import('../../src/shared/media-type.js');
    expect(charsetOf('application/json; charset=utf-16; x')).toBe('utf-16');
    expect(charsetOf('application/json; charset=')).toBe('utf-8');
    expect(charsetOf('application/json; charset="UTF-8"')).toBe('utf-8');
    expect(charsetOf('application/json')).toBe('utf-8');
  });
});
