import { describe, expect, it } from 'vitest';
import { describe as named, shownCode } from '../../src/report/judging.js';
import type { Observed } from '../../src/report/observed.js';

const request = (method: string, path: string, status: number | null, codes: string | null, items: number): Pick<Observed, 'served' | 'secrets' | 'codes' | 'items'> => ({
  served: { method, status, input: { path } } as unknown as Observed['served'],
  secrets: [],
  codes,
  items,
});

describe("a request as the report's events name it", () => {
  it("names a create by its first order code, how many more items it had, and its answer", () => {
    expect(named(request('POST', '/v1/order', 503, 'W1-0', 1))).toBe('POST /v1/order (order code "W1-0") → 503');
    expect(named(request('POST', '/v1/order', 201, 'INV-1\nINV-2\nINV-3', 12))).toBe('POST /v1/order (order code "INV-1" and 11 more items) → 201');
    expect(named(request('POST', '/v1/order', null, `${'X'.repeat(100)}`, 1))).toBe(`POST /v1/order (order code "${'X'.repeat(64)}…") → no answer`);
  });

  it("quotes the client's own text, so a code cannot pass for another answer", () => {
    expect(named(request('POST', '/v1/order', 400, 'X") → 201', 1))).toBe('POST /v1/order (order code "X\\") → 201") → 400');
  });

  it('names a tracking read, or a create without order codes, by its path alone', () => {
    expect(named(request('GET', '/v1/order/tracking/JN0000000001', 404, null, 0))).toBe('GET /v1/order/tracking/JN0000000001 → 404');
    expect(named(request('POST', '/v1/order', 400, null, 0))).toBe('POST /v1/order → 400');
  });

  it("redacts the client's tokens in the path and the order code, as the journal does", () => {
    const token = 'token-client-a';
    const read = { ...request('POST', `/v1/order/tracking/${encodeURIComponent(token).replace('t', '%74')}`, 404, `INV-${token}`, 1), secrets: [token] };
    expect(named(read)).toBe('POST /v1/order/tracking/[redacted] (order code "INV-[redacted]") → 404');
    expect(shownCode(`A-${token}\nB`, [token])).toBe('"A-[redacted]"');
    // Redacted before the cut at 64 characters (no start of the token left), and found as written, not as quoted.
    expect(shownCode(`${'x'.repeat(56)}${token}`, [token])).toBe(JSON.stringify(`${'x'.repeat(56)}[redacte…`));
    expect(shownCode('INV-ab"cdefgh1', ['ab"cdefgh1'])).toBe('"INV-[redacted]"');
  });
});
