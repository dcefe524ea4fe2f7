import { describe, expect, it } from 'vitest';
import { webhookBannerLine } from '../../src/webhooks/index.js';

const endpoints = (secret_source: string, url: string | null = 'http://127.0.0.1:3000/hooks') =>
  ({ of: async () => ({ url, enabled: true, secret_source, secret: 'whsec_dGVzdHRlc3R0ZXN0dGVzdA==' }) }) as never;
const client = { id: 'acme' } as never;

describe("the start banner's webhook line", () => {
  it('prints a generated secret on a sandbox that is not shared', async () => {
    expect(await webhookBannerLine(endpoints('generated'), client, true)).toBe('  webhook: http://127.0.0.1:3000/hooks  secret: whsec_dGVzdHRlc3R0ZXN0dGVzdA==  (client acme)');
  });

  it('on a shared one says a generated secret is kept (the same after a restart), not that it is new', async () => {
    expect(await webhookBannerLine(endpoints('generated'), client, false)).toBe('  webhook: http://127.0.0.1:3000/hooks  secret: generated once, kept in the store (the client reads it with GET /__sandbox/webhook)  (client acme)');
  });

  it.each([
    ['config', 'configured (not shown)'],
    ['runtime', 'set through the API (not shown)'],
  ])('never prints a secret from %s', async (source, shown) => {
    expect(await webhookBannerLine(endpoints(source, null), client, true)).toBe(`  webhook: none (set one with PUT /__sandbox/webhook)  secret: ${shown}  (client acme)`);
  });
});
