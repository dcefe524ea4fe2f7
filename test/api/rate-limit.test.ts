import supertest from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { testSandbox, TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox | undefined;
afterEach(() => sandbox?.close());

const TRACK = '/v1/order/tracking/SBXNOSUCH01';
const track = (token: string) => supertest(sandbox!.app).get(TRACK).set('Authorization', `Bearer ${token}`);

describe('--rate-limit', () => {
  it('answers a client past N requests in a second with 429, the envelope and Retry-After, while another client goes on', async () => {
    sandbox = await testSandbox({ rateLimit: 5 });
    // Sent together, well within the second however slow each request is (on PostgreSQL each reads its client's clock).
    const statuses = await Promise.all(Array.from({ length: 5 }, () => track(TOKEN_A).then((r) => r.status)));
    expect(statuses).toEqual([404, 404, 404, 404, 404]);
    // Control operations count too, and the other client has its own allowance.
    const [refused, control, other] = await Promise.all([track(TOKEN_A), supertest(sandbox.app).get('/__sandbox/faults').set('Authorization', `Bearer ${TOKEN_A}`), track(TOKEN_B)]);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.body).toEqual({ success: false, message: expect.stringContaining('more than 5 requests in a second'), errors: [] });
    expect(control.status).toBe(429);
    expect(other.status).toBe(404);
  });

  it('refuses before validating, so malformed requests count as well', async () => {
    sandbox = await testSandbox({ rateLimit: 2 });
    const bad = () => supertest(sandbox!.app).post('/v1/order').set('Authorization', `Bearer ${TOKEN_A}`).send({ nonsense: true });
    const statuses = await Promise.all([bad(), bad(), bad()].map((r) => r.then((res) => res.status)));
    expect(statuses.sort()).toEqual([400, 400, 429]);
  });

  it('lets the allowance come back after a second', async () => {
    sandbox = await testSandbox({ rateLimit: 1 });
    const statuses = await Promise.all([track(TOKEN_A), track(TOKEN_A)].map((r) => r.then((res) => res.status)));
    expect(statuses.sort()).toEqual([404, 429]);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await track(TOKEN_A)).status).toBe(404);
  });

  it("counts an admin acting for a client in the admins' allowance, leaving the client's whole", async () => {
    const ADMIN = 'rate-limit-admin-token';
    sandbox = await testSandbox({ rateLimit: 3, adminTokens: [ADMIN] });
    const asAdmin = () => supertest(sandbox!.app).get('/__sandbox/faults').set('Authorization', `Bearer ${ADMIN}`).set('X-Sandbox-Client', 'client-a');
    expect(await Promise.all([asAdmin(), asAdmin(), asAdmin()].map((r) => r.then((res) => res.status)))).toEqual([200, 200, 200]);
    const [refused, ...tracked] = await Promise.all([asAdmin(), track(TOKEN_A), track(TOKEN_A), track(TOKEN_A)]);
    // An admin is no client: the 429 says whose allowance is spent.
    expect([refused.status, refused.body.message]).toEqual([429, expect.stringMatching(/^The admin tokens \(counted together\) sent more than 3 requests in a second/)]);
    expect(tracked.map((r) => r.status)).toEqual([404, 404, 404]);
  });

  it('is off by default', async () => {
    sandbox = await testSandbox();
    const statuses = await Promise.all(Array.from({ length: 50 }, () => track(TOKEN_A).then((r) => r.status)));
    expect(new Set(statuses)).toEqual(new Set([404]));
  });
});
