import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/index.js';
import { createRequest } from '../support/orders.js';
import { hasChromium, launchChromium, signIn, warnIfNoChromium } from './browser.js';

warnIfNoChromium('dashboard polling');

const TOKEN = 'polling-token';
const SLOW_MS = 1500;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** The dashboard's polling (usePoll) when the reader moves on while a load is still in flight. */
describe.skipIf(!hasChromium)('/dashboard polling in headless Chromium', () => {
  let sandbox: Sandbox;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    sandbox = await createSandbox({ clock: 'manual', seed: 'polling', port: 0, clients: [{ token: TOKEN, id: 'client-p' }] });
    const created = await fetch(`${sandbox.url}/v1/order`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(createRequest(25)),
    });
    expect(created.status).toBe(201);
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(10_000);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
  });

  it('stops polling the page left during a slow load: only the page shown is asked for', async () => {
    await signIn(page, sandbox.url, TOKEN);
    await page.getByText('Page 1 of 2').waitFor();
    // From now on every load of the orders list takes SLOW_MS to answer.
    const firstPage: string[] = [];
    await page.route('**/__sandbox/orders?*', async (route) => {
      if (!new URL(route.request().url()).searchParams.has('cursor')) firstPage.push(route.request().url());
      await sleep(SLOW_MS);
      await route.continue();
    });
    // Leave page 1 while its next poll is in flight.
    await page.waitForRequest((req) => req.url().includes('/__sandbox/orders?') && !req.url().includes('cursor='), { timeout: 10_000 });
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText('Page 2 of 2').waitFor();
    await sleep(SLOW_MS + 500); // the load in flight answers
    const settled = firstPage.length;
    expect(settled).toBeGreaterThan(0); // page 1 was being loaded when it was left
    await sleep(3 * 2500); // three poll intervals
    expect(firstPage.length).toBe(settled);
  });
});
