import { expect } from 'vitest';
import { createRequest } from '../support/orders.js';
import type { CallOptions, TestSandbox } from '../support/sandbox.js';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** Creates one order (the spec example's first item) and answers its order number. */
export async function createOne(sandbox: TestSandbox, options: CallOptions = {}): Promise<string> {
  const res = await sandbox.call('POST', '/v1/order', { body: createRequest(1), ...options });
  expect(res.status).toBe(201);
  return res.body.order_numbers[0] as string;
}

/** GET /v1/order/{order_no} as client A. */
export const detailOf = (sandbox: TestSandbox, orderNo: string) => sandbox.call('GET', `/v1/order/${orderNo}`);

/** POST /v1/order/cancel as client A (or `token`). */
export const cancel = (sandbox: TestSandbox, body: unknown, token?: string) =>
  sandbox.call('POST', '/v1/order/cancel', { body, ...(token ? { token } : {}) });
