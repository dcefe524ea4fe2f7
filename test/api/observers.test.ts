import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApp } from '../../src/app/app.js';
import type { SandboxModule } from '../../src/http/module.js';
import { createRequest } from '../support/orders.js';
import { testSandbox, TOKEN_A, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

describe('a request observer that throws (journal, report, metrics are observers)', () => {
  it('leaves the request answered, the other observers told, the error logged, and the sandbox serving', async () => {
    sandbox = await testSandbox();
    const failing: SandboxModule = {
      name: 'failing-observer',
      observeRequests: () => {
        throw new RangeError('Maximum call stack size exceeded');
      },
    };
    const logged = vi.spyOn(sandbox.services.logger, 'error');
    // The failing observer first: the modules' own observers (the request journal among them) come after it.
    const app = createApp(sandbox.services, [failing, ...sandbox.modules]);
    const auth = { Authorization: `Bearer ${TOKEN_A}` };
    const created = await request(app).post('/v1/order').set(auth).send(createRequest(1));
    expect(created.status).toBe(201);
    await vi.waitFor(() => expect(logged).toHaveBeenCalled(), { timeout: 10_000 });
    expect(String(logged.mock.calls[0]![1])).toMatch(/request observer failed/);
    const journal = await request(app).get('/__sandbox/requests').set(auth);
    expect(journal.status).toBe(200);
    expect(journal.body.requests.some((entry: { path: string }) => entry.path === '/v1/order')).toBe(true);
  });
});
