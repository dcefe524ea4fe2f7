import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/index.js';
import { hasChromium, openPage, signIn, warnIfNoChromium } from './browser.js';

warnIfNoChromium('dashboard new order');

/** A partner limited to one courier, not the spec example's `jne`. */
const JNT_ONLY = 'dashboard-new-order-jnt';

describe.skipIf(!hasChromium)("the dashboard's New order form for a client limited to some couriers", () => {
  let sandbox: Sandbox;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    sandbox = await createSandbox({ clock: 'manual', seed: 'new-order', port: 0, data: ':memory:', logLevel: 'silent', clients: [{ token: JNT_ONLY, id: 'jnt-only', couriers: ['jnt'] }] });
    ({ browser, page } = await openPage());
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
  });

  it('prefills a courier the client may use, and creates the order with it', async () => {
    await signIn(page, sandbox.url, JNT_ONLY);
    await page.getByRole('link', { name: 'Scenarios' }).click();
    await page.getByRole('heading', { name: 'New order' }).waitFor();
    await page.getByLabel('Courier').waitFor();
    expect(await page.getByLabel('Courier').inputValue()).toBe('jnt');
    await page.getByRole('button', { name: 'Create order' }).click();
    const heading = page.getByRole('heading', { name: /^Order \d+$/, level: 1 });
    await heading.waitFor();
    const orderNo = (await heading.innerText()).replace('Order ', '');
    const order = await fetch(`${sandbox.url}/v1/order/${orderNo}`, { headers: { authorization: `Bearer ${JNT_ONLY}` } }).then((r) => r.json());
    expect(order.data).toMatchObject({ courier_code: 'jnt' });
  });
});
