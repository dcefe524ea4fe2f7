import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/http/errors.js';
import { LISTEN_OPENS, ListenOpens } from '../../src/http/listen-handshake.js';

describe('ListenOpens: listen sessions a client may open', () => {
  it(`takes ${LISTEN_OPENS.burst} at once, then ${LISTEN_OPENS.perSecond} a second, each client on its own; past that a 429 with Retry-After`, () => {
    let now = 1_000_000;
    const opens = new ListenOpens(() => now);
    for (let i = 0; i < LISTEN_OPENS.burst; i++) opens.take('acme');
    let refused: unknown;
    try {
      opens.take('acme');
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 429, headers: { 'Retry-After': '1' } });
    // Another client is not held up by the first.
    expect(() => opens.take('bolt')).not.toThrow();
    now += 1000;
    for (let i = 0; i < LISTEN_OPENS.perSecond; i++) opens.take('acme');
    expect(() => opens.take('acme')).toThrow(/opened more than 20 listen sessions at once, or 5 a second since/);
    // A quiet minute fills the bucket again, no further.
    now += 60_000;
    for (let i = 0; i < LISTEN_OPENS.burst; i++) opens.take('acme');
    expect(() => opens.take('acme')).toThrow(ApiError);
  });
});
