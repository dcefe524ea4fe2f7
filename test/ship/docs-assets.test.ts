import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await testSandbox();
});
afterAll(() => sandbox.close());

describe('GET /docs', () => {
  it.each(['/docs', '/docs/'])('answers %s with the Swagger UI page, without a token', async (path) => {
    const res = await sandbox.call('GET', path, { token: null });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.text).toContain('/docs/assets/swagger-ui-bundle.js');
    expect(res.text).toContain('/__sandbox/control.openapi.json');
  });

  it('names no CDN: every script and stylesheet is served by the sandbox', async () => {
    const res = await sandbox.call('GET', '/docs', { token: null });
    const refs = [...res.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(2);
    for (const ref of refs) expect(ref).toMatch(/^\/docs\/assets\//);
  });
});

describe('GET /docs/assets/{file}', () => {
  it.each([
    ['swagger-ui-bundle.js', 'javascript'],
    ['swagger-ui-standalone-preset.js', 'javascript'],
    ['swagger-ui.css', 'text/css'],
  ])('serves %s from the installed swagger-ui-dist', async (file, type) => {
    const res = await sandbox.call('GET', `/docs/assets/${file}`, { token: null });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain(type);
  });

  it('answers 404 with the error envelope for a file that is not there', async () => {
    const res = await sandbox.call('GET', '/docs/assets/nope.js', { token: null });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ success: false });
  });
});
