import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/index.js';
import { createRequest } from '../support/orders.js';
import { hasChromium, openPage, signIn, warnIfNoChromium } from './browser.js';

warnIfNoChromium('dashboard notices');

const TOKEN = 'dashboard-notices-token';
const READ_ONLY = 'dashboard-notices-read-only';

describe.skipIf(!hasChromium)('what the dashboard tells a partner signed in with its token', () => {
  let sandbox: Sandbox;
  let browser: Browser;
  let page: Page;
  const speedsSent: string[] = [];

  beforeAll(async () => {
    // A real clock, and one client with no admin token: that client may set the sandbox's speed.
    sandbox = await createSandbox({ clock: 'real', port: 0, data: ':memory:', logLevel: 'silent', clients: [{ token: TOKEN, id: 'notices' }, { token: READ_ONLY, id: 'notices', role: 'read_only' }] });
    ({ browser, page } = await openPage());
    page.on('request', (request) => {
      if (request.url().endsWith('/__sandbox/clock/speed')) speedsSent.push(request.postData() ?? '');
    });
    await signIn(page, sandbox.url, TOKEN);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
  });

  it('shows the orders at a mistyped view, and says which views there are', async () => {
    await page.goto(`${sandbox.url}/dashboard#/readiness`);
    await page.getByRole('heading', { name: 'Orders', level: 1 }).waitFor();
    expect(await page.getByRole('status').filter({ hasText: 'No view is called' }).innerText()).toBe(
      'No view is called "readiness" (the views: orders, scenarios, webhooks, clock, requests, report): here are the orders.',
    );
    await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Readiness' }).click();
    await page.getByRole('heading', { name: 'Readiness', level: 1 }).waitFor();
    expect(await page.getByText('No view is called').count()).toBe(0);
  });

  it('reads an address of no escape as written, and shows a long one cut', async () => {
    for (const [hash, shown] of [
      ['%E0%A4%A', '%E0%A4%A'],
      [`${'a'.repeat(3_000)}`, `${'a'.repeat(40)}…`],
    ]) {
      await page.goto(`${sandbox.url}/dashboard#/${hash}`);
      await page.reload();
      await page.getByRole('heading', { name: 'Orders', level: 1 }).waitFor();
      expect(await page.getByRole('status').filter({ hasText: 'No view is called' }).innerText()).toContain(`No view is called "${shown}" (the views:`);
    }
  });

  it('sends no speed from an empty speed field or one of 0, and sets the one given', async () => {
    await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Clock' }).click();
    const field = page.getByLabel('Speed (simulated ms per real ms)');
    await field.fill('');
    await page.getByRole('button', { name: 'Set speed' }).click();
    expect(await field.evaluate((input: HTMLInputElement) => input.validity.valueMissing)).toBe(true);
    await field.fill('0');
    await page.getByRole('button', { name: 'Set speed' }).click();
    expect(await field.evaluate((input: HTMLInputElement) => input.validationMessage)).toBe('A speed above 0: 1 is real time, 60 a minute a second');
    await field.fill('120');
    await page.getByRole('button', { name: 'Set speed' }).click();
    await page.getByText('Speed set: ×120').waitFor();
    expect(speedsSent).toEqual(['{"speed":120}']);
  });

  it("says on an order's page that its tracking read is a request of the client's, graded in its report, and not to its read_only token", async () => {
    const created = await fetch(`${sandbox.url}/v1/order`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(createRequest(1)) });
    const [orderNo] = ((await created.json()) as { order_numbers: string[] }).order_numbers;
    const graded = "Read with the client's partner token: a request of the client's like any other, graded in its readiness report";
    await page.goto(`${sandbox.url}/dashboard#/orders/${orderNo!}`);
    await page.getByText('GET /v1/order/tracking/', { exact: false }).waitFor({ timeout: 15_000 });
    await page.getByText(graded).waitFor();
    const reader = await (await browser.newContext()).newPage();
    await signIn(reader, sandbox.url, READ_ONLY);
    await reader.goto(`${sandbox.url}/dashboard#/orders/${orderNo!}`);
    await reader.getByText('GET /v1/order/tracking/', { exact: false }).waitFor({ timeout: 15_000 });
    expect(await reader.getByText(graded).count()).toBe(0);
  });
});
