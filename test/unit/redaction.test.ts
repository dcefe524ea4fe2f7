import { describe, expect, it } from 'vitest';
import { redactedBody } from '../../src/requests/redaction.js';
import { secretFieldOf } from '../../src/shared/index.js';

const TOKEN = 'token-a-0123456789';
const SECRETS = [TOKEN];
const sent = (body: unknown, text = JSON.stringify(body)) => redactedBody(body, Buffer.from(text), SECRETS);

describe('a journaled body', () => {
  it('is kept as parsed, not copied, when it holds an escape but no token', () => {
    const body = { note: 'a/b', items: [{ name: 'x' }] };
    expect(sent(body, '{"note":"a\\/b","items":[{"name":"x"}]}')).toBe(body);
  });

  it('is a copy with the token redacted when an escape hid it from its bytes', () => {
    const body = { note: 'fine', key: TOKEN };
    const shown = sent(body, `{"note":"fine","key":"${TOKEN.replace('a', '\\u0061')}"}`);
    expect(shown).toEqual({ note: 'fine', key: '[redacted]' });
    expect(body.key).toBe(TOKEN);
  });
});

describe('secretFieldOf', () => {
  it('names the first field whose text, digits or name carries a secret, as a request field is named', () => {
    expect(secretFieldOf({ a: 1, m: ['x', `y${TOKEN}`] }, SECRETS, 'action.body')).toBe('action.body.m[1]');
    expect(secretFieldOf({ [`k${TOKEN}`]: 'v' }, SECRETS, 'match.body')).toBe(`match.body.k${TOKEN}`);
    expect(secretFieldOf([[{ n: 123456789 }]], ['3456'], '')).toBe('[0][0].n');
    expect(secretFieldOf({ a: [1, 'two', null, { b: false }] }, SECRETS, 'x')).toBeUndefined();
  });
});
