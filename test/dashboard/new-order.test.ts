import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/index.js';
import { hasChromium, openPage, signIn, warnIfNoChromium } from './browser.js';

warnIfNoChromium('dashboard new order');

/** A partner limited to one courier, not the spec example's `jne`. */
const JNT_ONLY = 'dashboard-new-order-jnt';
/** A partner whose configuration enables no courier. */
const NO_COURIER = 'dashboard-new-order-none';

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
    await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Scenarios' }).click();
    await page.getByRole('heading', { name: 'New order' }).waitFor();
    await page.getByLabel('Courier').waitFor();
    expect(await page.getByLabel('Courier').inputValue()).toBe('jnt');
    await page.getByRole('button', { name: 'Create order' }).click();
    const heading = page.getByRole('heading', { name: /^Order \d+$/, level: 1 });
    await heading.waitFor();
    const orderNo = (await heading.innerText()).replace('Order ', '');
    const order = await fetch(`${sandbox.url}/v1/order/${orderNo}`, { headers: { authorization: `Bearer ${JNT_ONLY}` } }).then((r) => r.json());
    expect(order.data).toMatchObject({ courier_code: 'jnt' });
    // The couriers came from a control read: no provider request of the partner's was made for them (none counted in its report).
    const report = await fetch(`${sandbox.url}/__sandbox/report`, { headers: { authorization: `Bearer ${JNT_ONLY}` } }).then((r) => r.json());
    expect(report.coverage.operations.find((op: { operation_id: string }) => op.operation_id === 'listCouriers')).toMatchObject({ exercised: 0 });
  });

  it('says so when no courier is enabled for the client', async () => {
    const none = await createSandbox({ clock: 'manual', port: 0, data: ':memory:', logLevel: 'silent', clients: [{ token: NO_COURIER, id: 'no-courier', couriers: [] }] });
    try {
      await signIn(page, none.url, NO_COURIER);
      await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Scenarios' }).click();
      await page.getByText('No courier is enabled for this client: every create answers 403 until its configuration enables one.').waitFor();
    } finally {
      await none.close();
    }
  });
});
