import supertest from 'supertest';
import type { Response } from 'supertest';
import { expect } from 'vitest';
import { createApp } from '../../src/app/app.js';
import type { SandboxModule } from '../../src/http/module.js';
import { sandboxModules } from '../../src/app/modules.js';
import type { SandboxOptions } from '../../src/config/options.js';
import { buildServices, stopServices, type BuildSeams } from '../../src/app/sandbox.js';
import type { Services } from '../../src/app/services.js';
import type { CompiledOperation } from '../../src/spec/compile.js';
import { databaseFor, onPostgres, releaseDatabase } from './store-kind.js';

export const TOKEN_A = 'token-client-a';
export const TOKEN_B = 'token-client-b';

export interface CallOptions {
  token?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A sandbox app driven through supertest, with a manual clock and two clients by default. */
export interface TestSandbox {
  services: Services;
  modules: SandboxModule[];
  app: ReturnType<typeof createApp>;
  /** Sends a request as client A (or `token`) and checks the answer against the specs. */
  call(method: string, path: string, options?: CallOptions): Promise<Response>;
  advance(ms: number): Promise<void>;
  close(): Promise<void>;
}

function operationFor(services: Services, method: string, path: string): CompiledOperation | undefined {
  const bare = path.split('?')[0]!;
  for (const spec of [services.specs.control, services.specs.provider]) {
    for (const op of spec.operations) {
      const pattern = new RegExp(`^${op.path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      if (op.method === method.toLowerCase() && pattern.test(bare)) return op;
    }
  }
  return undefined;
}

/**
 * Asserts that an answer is what the spec documents for its operation; an answer
 * with no operation (unknown path, wrong method) must still be the error envelope.
 */
export function expectMatchesSpec(services: Services, method: string, path: string, res: Response): void {
  if (!String(res.headers['content-type'] ?? '').includes('json')) return;
  const op = operationFor(services, method, path);
  const envelope = services.specs.provider.byId.get('createOrder')!;
  const problems = op
    ? op.validateResponse(res.status, res.body)
    : envelope.validateResponse(400, res.body); // the envelope schema, whatever the status
  expect(problems, `${method} ${path} → ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`).toEqual([]);
}

export const defaultTestOptions: SandboxOptions = {
  clock: 'manual',
  seed: 'test-seed',
  awbDelay: '1m',
  clients: [
    { token: TOKEN_A, id: 'client-a' },
    { token: TOKEN_B, id: 'client-b' },
  ],
};

/**
 * The options a test's sandbox runs with: on a PostgreSQL run (test:postgres) a data
 * file becomes a database of its own (the same file, the same database), unless the
 * test names its store itself.
 */
async function onThisRunsStore(options: SandboxOptions, seams: BuildSeams): Promise<{ options: SandboxOptions; temporary?: string }> {
  if (!onPostgres || options.databaseUrl !== undefined || seams.storeFileSystem !== undefined) return { options };
  const { data, ...rest } = options;
  const database = await databaseFor(data);
  return { options: { ...rest, databaseUrl: database.url }, ...(database.temporary ? { temporary: database.url } : {}) };
}

/** Builds a sandbox app (no port) for a test. Call `close()` in afterEach. */
export async function testSandbox(options: SandboxOptions = {}, seams: BuildSeams = {}): Promise<TestSandbox> {
  const store = await onThisRunsStore({ ...defaultTestOptions, ...options }, seams);
  const services = await buildServices(store.options, seams);
  const modules = sandboxModules(services);
  const app = createApp(services, modules);
  for (const m of modules) await m.start?.();
  await services.scheduler.runDue();
  const agent = supertest(app);
  return {
    services,
    modules,
    app,
    async call(method, path, { token = TOKEN_A, body, headers = {} } = {}) {
      let req = agent[method.toLowerCase() as 'get'](path);
      if (token !== null) req = req.set('Authorization', `Bearer ${token}`);
      req = req.set(headers);
      const res = await (body === undefined ? req : req.send(body as object));
      expectMatchesSpec(services, method, path, res);
      return res;
    },
    advance: (ms) => services.advanceClock(ms),
    async close() {
      await stopServices(services, modules);
      await services.storage.close();
      if (store.temporary) await releaseDatabase(store.temporary);
    },
  };
}
