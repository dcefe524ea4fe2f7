import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TestSandbox } from '../support/sandbox.js';
import { tempDir } from '../support/tmp.js';
import { Receiver } from './receiver.js';
import { createOrders, deliveries, webhookSandbox } from './support.js';

const HOUR = 3_600_000;
const START = Date.parse('2026-03-02T08:00:00Z');

let receiver: Receiver;
let sandbox: TestSandbox | undefined;
beforeEach(async () => {
  // Wall time is faked (and runs on by itself) so that the stop below can last hours.
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true, now: START });
  receiver = await Receiver.start();
  receiver.respond = () => ({ status: 500, body: 'down' });
});
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
  await receiver.close();
  vi.useRealTimers();
});

/** A sandbox on a real clock, on `data`, whose client A sends to the receiver: retries an hour apart, AWB after 1 s. */
const realClockSandbox = (data: string) => webhookSandbox(receiver.url, { data, clock: 'real', awbDelay: '1s', webhookRetries: '0,1h,1h' });

/** Client A's first delivery once it has `count` attempts (or after 10 s). */
async function attempted(on: TestSandbox, count: number) {
  let delivery = (await deliveries(on))[0];
  for (let i = 0; i < 100 && (delivery?.attempts.length ?? 0) < count; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    delivery = (await deliveries(on))[0];
  }
  return delivery;
}

describe('webhook retries due while the sandbox was stopped (real clock)', () => {
  const dir = tempDir();

  it('makes the attempt that fell due at the next start, and counts the next retry from then: a long stop does not use the schedule up at once', async () => {
    const data = join(dir(), 'sandbox.json');
    sandbox = await realClockSandbox(data);
    await createOrders(sandbox, 1);
    const first = await attempted(sandbox, 1);
    expect(first).toMatchObject({ status: 'pending', attempts: [{ status_code: 500 }] });
    await sandbox.close();

    // Stopped for three hours: the retry due an hour after the first attempt is made at the start, the last one an hour after that.
    vi.setSystemTime(Date.now() + 3 * HOUR);
    sandbox = await realClockSandbox(data);
    await attempted(sandbox, 2);
    // Time for a retry due at once to be made: counted from the late attempt's due time, the last one would be.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const [after] = await deliveries(sandbox);
    expect(after).toMatchObject({ status: 'pending', attempts: [{ status_code: 500 }, { status_code: 500 }] });
    expect(receiver.received).toHaveLength(2);
    expect(Date.parse(after!.next_attempt_at!)).toBeGreaterThanOrEqual(START + 4 * HOUR);
  }, 30_000);
});
