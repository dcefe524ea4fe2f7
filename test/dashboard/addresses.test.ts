import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/index.js';
import { hasChromium, openPage, signIn, warnIfNoChromium } from './browser.js';

warnIfNoChromium('dashboard addresses');

const TOKEN = 'dashboard-addresses-token';

describe.skipIf(!hasChromium)('the dashboard at an address of no view, and its speed form', () => {
  let sandbox: Sandbox;
  let browser: Browser;
  let page: Page;
  const speedsSent: string[] = [];

  beforeAll(async () => {
    // A real clock, and one client with no admin token: that client may set the sandbox's speed.
    sandbox = await createSandbox({ clock: 'real', port: 0, data: ':memory:', logLevel: 'silent', clients: [{ token: TOKEN, id: 'addresses' }] });
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

  it('sends no speed from an empty speed field, and sets the one given', async () => {
    await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Clock' }).click();
    const field = page.getByLabel('Speed (simulated ms per real ms)');
    await field.fill('');
    await page.getByRole('button', { name: 'Set speed' }).click();
    expect(await field.evaluate((input: HTMLInputElement) => input.validity.valueMissing)).toBe(true);
    await field.fill('120');
    await page.getByRole('button', { name: 'Set speed' }).click();
    await page.getByText('Speed set: ×120').waitFor();
    expect(speedsSent).toEqual(['{"speed":120}']);
  });
});
