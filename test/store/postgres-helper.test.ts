import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startPostgres } from '../support/postgres.js';

describe('the embedded PostgreSQL of the tests', () => {
  it('keeps its socket and its lock in its own data folder, not in /tmp', async () => {
    const pg = await startPostgres();
    try {
      const port = new URL(pg.serverUrl).port;
      expect(existsSync(join(pg.dataDir, `.s.PGSQL.${port}`))).toBe(true);
      expect(existsSync(join(pg.dataDir, `.s.PGSQL.${port}.lock`))).toBe(true);
      expect(existsSync(`/tmp/.s.PGSQL.${port}.lock`)).toBe(false);
    } finally {
      await pg.stop();
    }
  });

  it("says why it could not start, in the server's own words", async () => {
    await expect(startPostgres({ shared_buffers: 'plenty' })).rejects.toThrow(
      /PostgreSQL could not start[\s\S]*Its log:[\s\S]*invalid value for parameter "shared_buffers": "plenty"/,
    );
  });
});
