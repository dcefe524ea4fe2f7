import { afterEach, describe, expect, it } from 'vitest';
import { createRequest } from '../support/orders.js';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox;
afterEach(() => sandbox.close());
let requests = 0;

const preflight = (path: string, origin: string, method = 'POST', headers = 'authorization, content-type, prefer, x-sandbox-scenario') => {
  requests++;
  return sandbox.call('OPTIONS', path, { token: null, headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': headers } });
};

describe('CORS, default policy (--cors-origins "*")', () => {
  it.each(['/v1/order', '/v1/order/tracking/SBXDLV00000001', '/__sandbox/faults', '/__sandbox/orders/123/advance'])(
    'answers a preflight for %s with 204, any origin, the methods and the headers a client sends',
    async (path) => {
      sandbox = await testSandbox();
      const res = await preflight(path, 'https://tools.example.com');
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-allow-methods']).toBe('GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS');
      expect(res.headers['access-control-allow-headers']).toBe('Authorization, Content-Type, Prefer, X-Sandbox-Scenario, X-Sandbox-Webhook-Chaos');
      expect(res.headers['access-control-max-age']).toBe('600');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    },
  );

  it('allows any other X-Sandbox-* header a browser asks for', async () => {
    sandbox = await testSandbox();
    const res = await preflight('/v1/order', 'http://localhost:3000', 'POST', 'authorization, x-sandbox-future');
    expect(res.headers['access-control-allow-headers']).toContain('x-sandbox-future');
  });

  it('marks a simple request from another origin readable, exposing WWW-Authenticate and Preference-Applied', async () => {
    sandbox = await testSandbox();
    requests++;
    const res = await sandbox.call('POST', '/v1/order', { body: createRequest(1), headers: { Origin: 'http://localhost:3000' } });
    expect(res.status).toBe(201);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-expose-headers']).toContain('WWW-Authenticate');
    expect(res.headers['access-control-expose-headers']).toContain('Preference-Applied');
  });

  it('adds no CORS headers to a request without Origin (curl, servers)', async () => {
    sandbox = await testSandbox();
    requests++;
    const res = await sandbox.call('GET', '/v1/couriers');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('still needs the token: a cross-origin request without one is a 401 the browser can read', async () => {
    sandbox = await testSandbox();
    requests++;
    const res = await sandbox.call('GET', '/v1/couriers', { token: null, headers: { Origin: 'http://localhost:3000' } });
    expect(res.status).toBe(401);
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });
});

describe('CORS with --cors-origins listing origins', () => {
  it('echoes an allowed origin, with Vary: Origin', async () => {
    sandbox = await testSandbox({ corsOrigins: ['https://tools.example.com', 'http://localhost:3000'] });
    const res = await preflight('/v1/order', 'http://localhost:3000');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('http://localhost:3000');
    expect(res.headers.vary).toContain('Origin');
  });

  it('answers a preflight from another origin 403 with the envelope naming header.origin', async () => {
    sandbox = await testSandbox({ corsOrigins: ['https://tools.example.com'] });
    const res = await preflight('/v1/order', 'https://evil.example.net');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ success: false, message: expect.stringContaining('--cors-origins'), errors: [{ field: 'header.origin', message: 'is not an allowed origin' }] });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers a simple request from another origin without CORS headers (the browser hides it)', async () => {
    sandbox = await testSandbox({ corsOrigins: ['https://tools.example.com'] });
    requests++;
    const res = await sandbox.call('GET', '/v1/couriers', { headers: { Origin: 'https://evil.example.net' } });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('CORS with --cors-origins none', () => {
  it('adds no CORS headers, and OPTIONS is a 405 like any other method the path does not take', async () => {
    sandbox = await testSandbox({ corsOrigins: [] });
    const res = await preflight('/v1/order', 'https://tools.example.com');
    expect(res.status).toBe(405);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.body.success).toBe(false);
    console.log(`[security:cors] ${requests} preflight and simple requests under 3 policies (any, listed, none)`);
  });
});
