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

  /** A tab of its own, signed in, on the first page of the orders. */
  async function ordersTab(): Promise<Page> {
    const tab = await (await browser.newContext()).newPage();
    tab.setDefaultTimeout(10_000);
    await signIn(tab, sandbox.url, TOKEN);
    await tab.getByText('Page 1 of 2').waitFor();
    return tab;
  }

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

  it('asks for nothing while the tab is in the background, and loads at once when it is shown again', async () => {
    const tab = await ordersTab();
    try {
      const asked: number[] = [];
      tab.on('request', (req) => void (req.url().includes('/__sandbox/orders?') && asked.push(Date.now())));
      await setHidden(tab, true);
      await sleep(SLOW_MS); // a load in flight as it was hidden answers
      const settled = asked.length;
      await sleep(3 * 2500); // three poll intervals
      expect(asked.length).toBe(settled);
      const shownAt = Date.now();
      await setHidden(tab, false);
      await expect.poll(() => asked.length, { timeout: 1_000, interval: 50 }).toBeGreaterThan(settled);
      expect(asked.at(-1)! - shownAt).toBeLessThan(1_000);
    } finally {
      await tab.close();
    }
  });

  it('waits four times a slow load\'s length before asking again', async () => {
    const tab = await ordersTab();
    try {
      const asked: number[] = [];
      await tab.route('**/__sandbox/orders?*', async (route) => {
        asked.push(Date.now());
        await sleep(SLOW_MS);
        await route.continue();
      });
      await expect.poll(() => asked.length, { timeout: 15_000, interval: 200 }).toBeGreaterThanOrEqual(2);
      // A load of SLOW_MS, then four times that before the next: not SLOW_MS plus the usual 2.5 s.
      expect(asked[1]! - asked[0]!).toBeGreaterThanOrEqual(SLOW_MS + 4 * SLOW_MS - 500);
    } finally {
      await tab.close();
    }
  }, 30_000);
});

/** Puts the tab in the background (or back), as the browser tells a page of it. */
function setHidden(tab: Page, hidden: boolean): Promise<void> {
  return tab.evaluate((h) => {
    Object.defineProperty(document, 'hidden', { value: h, configurable: true });
    document.dispatchEvent(new Event('visibilitychange'));
  }, hidden);
}
