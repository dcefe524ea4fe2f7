import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../src/store/embedded/file/schema.js';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';
import { tempDir } from '../support/tmp.js';
import { startCli } from '../support/cli.js';

const SAMPLE = new URL('../fixtures/sandbox-v0.json', import.meta.url);
const sample = JSON.parse(readFileSync(SAMPLE, 'utf8')) as { default_token: string; orders: Array<{ order_no: string; awb: string }> };

let sandbox: TestSandbox | undefined;

/** Starts a sandbox on a copy of the checked-in version-0 data file. */
async function startOnSample(dir: string, clients?: []): Promise<{ sandbox: TestSandbox; path: string }> {
  const path = join(dir, 'sandbox.json');
  copyFileSync(SAMPLE, path);
  sandbox = await testSandbox({ data: path, ...(clients ? { clients } : {}) });
  return { sandbox, path };
}

describe('a data file of schema version 0 (test/fixtures/sandbox-v0.json)', () => {
  const dir = tempDir();
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  it('is migrated on start: its orders answer through the API', async () => {
    const { sandbox } = await startOnSample(dir());
    for (const { order_no, awb } of sample.orders) {
      const state = await sandbox.call('GET', `/__sandbox/orders/${order_no}`);
      expect(state.status).toBe(200);
      expect(state.body).toMatchObject({ order_no, awb, status: 'delivered' });
      const tracking = await sandbox.call('GET', `/v1/order/tracking/${awb}`);
      expect(tracking.status).toBe(200);
      expect(tracking.body.last_status).toBe('2');
    }
  });

  it('keeps the generated token of the old file', async () => {
    const { sandbox } = await startOnSample(dir(), []);
    expect(sandbox.services.registry.clients.map((c) => c.token)).toEqual([sample.default_token]);
  });

  it(`is rewritten at schema version ${SCHEMA_VERSION} on close`, async () => {
    const { sandbox, path } = await startOnSample(dir());
    await sandbox.close();
    const written = JSON.parse(readFileSync(path, 'utf8'));
    expect(written.schema_version).toBe(SCHEMA_VERSION);
    expect(written).not.toHaveProperty('default_token');
    expect(written.meta.default_token).toBe(sample.default_token);
    expect(Object.keys(written.orders).sort()).toEqual(sample.orders.map((o) => o.order_no).sort());
    for (const order of Object.values(written.orders) as Array<Record<string, unknown>>) {
      expect(order).toMatchObject({ awb_error: null, cancelled_at: null });
    }
  });

  it('starts again from the rewritten file with the same orders', async () => {
    const first = await startOnSample(dir());
    await first.sandbox.close();
    sandbox = await testSandbox({ data: first.path });
    const res = await sandbox.call('GET', '/__sandbox/orders');
    expect(res.body.total).toBe(sample.orders.length);
  });
});

describe('the start that migrates a data file, from the CLI', () => {
  const dir = tempDir();

  it('logs that it migrated the file and that the older sandbox cannot open it now; the next start does not', async () => {
    const path = join(dir(), 'sandbox.json');
    copyFileSync(SAMPLE, path);
    const migrated = (output: string) => output.split('\n').filter((line) => line.includes('"from_schema"')).map((line) => JSON.parse(line));
    const first = await startCli(['--port', '0', '--data', path, '--clock', 'manual']);
    await first.stop();
    expect(migrated(first.output())).toEqual([
      expect.objectContaining({ level: 30, data: path, from_schema: 0, to_schema: SCHEMA_VERSION, msg: `the data file was of schema version 0: migrated to ${SCHEMA_VERSION} and written back (the sandbox that wrote it cannot use it now: keep a copy of the old file to go back)` }),
    ]);
    const again = await startCli(['--port', '0', '--data', path, '--clock', 'manual']);
    await again.stop();
    expect(migrated(again.output())).toEqual([]);
  }, 60_000);
});

