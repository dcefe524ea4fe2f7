import { existsSync } from 'node:fs';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

/** Logs why the browser tests of `file` do not run here. */
export function warnIfNoChromium(file: string): void {
  if (!hasChromium) console.warn(`[${file}] SKIPPED: ${CHROMIUM} is absent (apt-get install -y chromium; .ci/run installs it as root).`);
}

/** Debian's Chromium, headless, with nothing that calls home. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** A laptop's window: the size the dashboard's tests see it at, unless they try another. */
export const WINDOW = { width: 1280, height: 800 };

/** A page of a fresh headless Chromium at `viewport`, with the page's uncaught errors collected and a 10 s default timeout; close `browser` after. */
export async function openPage(viewport = WINDOW): Promise<{ browser: Browser; page: Page; pageErrors: string[] }> {
  const browser = await launchChromium();
  const page = await (await browser.newContext({ viewport })).newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.setDefaultTimeout(10_000);
  return { browser, page, pageErrors };
}

/** Signs in on the dashboard's form and waits for the Orders view. */
export async function signIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(`${url}/dashboard#/orders`);
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Orders', level: 1 }).waitFor();
}

/** Runs axe on the page as shown and expects no serious or critical violation. */
export async function expectAccessible(page: Page, view: string): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  const severe = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(severe.map((v) => `${view}: ${v.id} (${v.impact}) ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
}
