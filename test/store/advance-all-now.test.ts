import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { testSandbox, TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';

const ADMIN = 'advance-all-admin';
const HOUR = 3_600_000;
const DAY = 86_400_000;

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

const stores = [
  { store: 'the embedded store', databaseUrl: async (): Promise<string | undefined> => undefined },
  { store: 'PostgreSQL', databaseUrl: async (): Promise<string | undefined> => server.freshDatabase() },
];

const clockOf = async (s: TestSandbox, token: string) => (await s.call('GET', '/__sandbox/clock', { token })).body as { now_ms: number; now: string };

describe.each(stores)('POST /__sandbox/clock/advance-all answers the time it moved the clocks to ($store)', ({ databaseUrl }) => {
  it.each(['real', 'manual'] as const)('on a %s clock: now is where a client that ran with the sandbox clock stands, not wall time', async (clock) => {
    const url = await databaseUrl();
    const sandbox = await testSandbox({ clock, adminTokens: [ADMIN], ...(url ? { databaseUrl: url } : {}) });
    try {
      // B runs an hour ahead of the sandbox's clock; A runs with it.
      expect((await sandbox.call('POST', '/__sandbox/clock/advance', { token: TOKEN_B, body: { ms: HOUR } })).status).toBe(200);
      const res = await sandbox.call('POST', '/__sandbox/clock/advance-all', { token: ADMIN, body: { ms: DAY } });
      expect(res.status).toBe(200);
      const a = await clockOf(sandbox, TOKEN_A);
      const b = await clockOf(sandbox, TOKEN_B);
      // A day ahead of wall time: the advance's time, read after the answer (a real clock runs on meanwhile).
      expect(res.body.now_ms).toBeGreaterThan(Date.now() + DAY - 60_000);
      expect(res.body.now).toBe(new Date(res.body.now_ms).toISOString());
      expect(a.now_ms - res.body.now_ms).toBeGreaterThanOrEqual(0);
      expect(a.now_ms - res.body.now_ms).toBeLessThan(5_000);
      expect(b.now_ms - a.now_ms).toBeGreaterThanOrEqual(HOUR);
      expect(b.now_ms - a.now_ms).toBeLessThan(HOUR + 5_000);
    } finally {
      await sandbox.close();
    }
  });
});
