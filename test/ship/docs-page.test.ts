import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/index.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`[docs-page] SKIPPED: ${CHROMIUM} is absent (apt-get install -y chromium; .ci/run installs it as root).`);

/** Waits until the text is shown on the page (rendered, not only in the source). */
async function visible(page: Page, text: string): Promise<void> {
  const locator = page.getByText(text, { exact: true }).first();
  await locator.waitFor({ state: 'visible', timeout: 15_000 });
  expect(await locator.isVisible()).toBe(true);
}

describe.skipIf(!hasChromium)('GET /docs in headless Chromium', () => {
  let sandbox: Sandbox;
  let browser: Browser;
  let page: Page;
  const offOrigin: string[] = [];
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    sandbox = await createSandbox({ tokens: ['docs-token'] });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await browser.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('request', (req) => {
      if (!req.url().startsWith(sandbox.url) && !req.url().startsWith('data:')) offOrigin.push(req.url());
    });
    await page.goto(`${sandbox.url}/docs`);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
  });

  it('is served with a Content-Security-Policy of its own origin and its one inline script, under which it runs with no error', async () => {
    const res = await fetch(`${sandbox.url}/docs`);
    expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'self'; script-src 'self' 'sha256-[A-Za-z0-9+/=]+';/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    await visible(page, 'Create one or more shipment orders');
    expect(consoleErrors.filter((text) => /Content Security Policy|Refused to/i.test(text))).toEqual([]);
  });

  it('renders the provider API operations', async () => {
    await visible(page, 'Create one or more shipment orders');
    await visible(page, 'Tracking history of a shipment');
    expect(await page.locator('.opblock-summary-path').allInnerTexts()).toEqual(expect.arrayContaining(['/v1/order', '/v1/order/tracking/{order_no}']));
  });

  it('switches to the control API from the spec dropdown', async () => {
    await page.locator('.topbar select').selectOption({ label: 'Sandbox control API (/__sandbox)' });
    await visible(page, '/__sandbox/clock/advance');
    await visible(page, "Move the calling client's clock on and process everything of its that falls due");
    expect(await page.locator('.opblock-summary-path').allInnerTexts()).not.toContain('/v1/order');
  });

  it('"Try it out" calls the sandbox the page came from', async () => {
    const health = page.locator('.opblock', { has: page.locator('.opblock-summary-path', { hasText: /^\/__sandbox\/health$/ }) });
    await health.locator('.opblock-summary').click();
    await health.getByRole('button', { name: 'Try it out' }).click();
    await health.getByRole('button', { name: 'Execute' }).click();
    await health.locator('.live-responses-table tbody td.response-col_status').first().waitFor({ timeout: 15_000 });
    expect(await health.locator('.live-responses-table tbody td.response-col_status').first().innerText()).toBe('200');
    expect(await health.locator('.request-url pre').innerText()).toBe(`${sandbox.url}/__sandbox/health`);
  });

  it('shows no spec warning or error box', async () => {
    expect(await page.locator('.errors-wrapper').count()).toBe(0);
    expect(await page.getByText('jsonSchemaDialect').count()).toBe(0);
  });

  it('loads nothing from outside the sandbox (works offline)', () => {
    expect(offOrigin).toEqual([]);
  });
});
