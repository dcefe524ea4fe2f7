import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testSandbox, TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox;
beforeEach(async () => {
  sandbox = await testSandbox();
});
afterEach(() => sandbox.close());

describe('GET /__sandbox/scenarios', () => {
  it('lists every scenario with its description and magic AWB', async () => {
    const res = await sandbox.call('GET', '/__sandbox/scenarios');
    expect(res.status).toBe(200);
    expect(res.body.map((s: { name: string }) => s.name).sort()).toEqual(['awb_failed', 'cancelled', 'delivered', 'failed_attempt', 'returned', 'stuck']);
    for (const s of res.body) expect(s).toMatchObject({ description: expect.any(String), magic_awb: expect.stringMatching(/^SBX/) });
  });
});

describe('magic AWBs', () => {
  it('give every client the complete history of their scenario', async () => {
    const scenarios = (await sandbox.call('GET', '/__sandbox/scenarios')).body as Array<{ name: string; magic_awb: string; steps: unknown[] }>;
    for (const scenario of scenarios) {
      const answers = [];
      for (const token of [TOKEN_A, TOKEN_B]) answers.push(await sandbox.call('GET', `/v1/order/tracking/${scenario.magic_awb}`, { token }));
      if (scenario.name === 'awb_failed') {
        for (const res of answers) expect(res.status).toBe(404);
        continue;
      }
      for (const res of answers) {
        expect(res.status).toBe(200);
        expect(res.body.history).toHaveLength(scenario.steps.length);
        expect(res.body.last_update).toBe(res.body.history[0].update_on);
      }
      // supertest serves each request on its own port: compare photo paths, not hosts.
      const withoutHost = (body: { history: Array<{ pod_photo: string | null }> }) =>
        body.history.map((e) => ({ ...e, pod_photo: e.pod_photo && new URL(e.pod_photo).pathname }));
      expect(withoutHost(answers[0]!.body)).toEqual(withoutHost(answers[1]!.body));
    }
  });

  it('show the delivered journey ending on a POD scan with a photo', async () => {
    const res = await sandbox.call('GET', '/v1/order/tracking/SBXDLV00000001');
    expect(res.body.last_status).toBe('2');
    expect(res.body.history[0].pod_photo).toMatch(/^http:\/\/127\.0\.0\.1(:\d+)?\/__sandbox\/pod\/SBXDLV00000001-[0-9a-f]{20}\.png$/);
    expect(res.body.history.at(-1).status).toBe('1');
  });

  it.each([
    ['a Host that names a host and port', 'sandbox.partner.test:8443', /^http:\/\/sandbox\.partner\.test:8443\/__sandbox\/pod\//],
    ['a bracketed IPv6 Host', '[::1]:4010', /^http:\/\/\[::1\]:4010\/__sandbox\/pod\//],
    // 15 KB of anything went into the URL, and into the key of every tracking answer kept (10,000 of them grew the process ~570 MB).
    ['a Host of 15 KB', 'x'.repeat(15_000), /^http:\/\/127\.0\.0\.1:\d+\/__sandbox\/pod\//],
    ['a Host that is no host', 'evil.test/<script>', /^http:\/\/127\.0\.0\.1:\d+\/__sandbox\/pod\//],
  ])('build the photo URL from %s, or else from the address the sandbox was reached at', async (_case, host, url) => {
    const res = await sandbox.call('GET', '/v1/order/tracking/SBXDLV00000001', { headers: { host } });
    expect(res.status).toBe(200);
    expect(res.body.history[0].pod_photo).toMatch(url);
  });
});
