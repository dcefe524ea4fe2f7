import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../support/cli.js';
import { createRequest } from '../support/orders.js';
import { Receiver } from '../webhooks/receiver.js';
import { expectAccessible, hasChromium, launchChromium, signIn, warnIfNoChromium } from './browser.js';

warnIfNoChromium('dashboard with real data');

const TOKEN = 'real-data-token';
const WINDOW = { width: 1280, height: 800 };
/** The narrowest phone the dashboard is made for (a 360 px wide Android; iPhones are 375-390). */
const PHONE = { width: 360, height: 780 };
const HOUR = 60 * 60_000;

/** The page's full size: a view that holds real data stays within a few screens and the window's width. */
const size = (page: Page) => page.evaluate(() => ({ height: document.documentElement.scrollHeight, width: document.documentElement.scrollWidth }));

/** The lines an element's text takes on screen: 1 when no word of it is broken or wrapped. */
const lines = (element: Locator) =>
  element.evaluate((e) => {
    const range = document.createRange();
    range.selectNodeContents(e);
    return new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size;
  });

/**
 * The dashboard on a client with 1,000 webhook deliveries (half of them failed after the
 * whole retry schedule, 7 attempts each) and a full request journal of 1,000 entries.
 */
describe.skipIf(!hasChromium)('/dashboard with a client full of data, in headless Chromium', () => {
  let cli: RunningCli;
  let receiver: Receiver;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];

  async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${cli.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  beforeAll(async () => {
    receiver = await Receiver.start();
    // Every other order's receiver is down (by the order in which its orders first arrive: order
    // numbers are random, so their parity is no half): its delivery fails at each of its 7 attempts.
    const arrival = new Map<string, number>();
    receiver.respond = (webhook) => {
      const orderNo = String(webhook.json.order_no ?? '');
      if (!arrival.has(orderNo)) arrival.set(orderNo, arrival.size);
      return arrival.get(orderNo)! % 2 === 0 ? { status: 200, body: 'ok' } : { status: 500, body: 'down' };
    };
    cli = await startCli(['--port', '0', '--data', ':memory:', '--clock', 'manual', '--clock-start', '2026-11-23T08:00:00Z', '--seed', 'real-data', '--awb-delay', '1m', '--token', TOKEN, '--log-level', 'silent']);
    // A long URL, as a partner's may be: its attempts, unfolded, still fit the window.
    expect((await api('PUT', '/__sandbox/webhook', { url: `${receiver.url}/hooks/${'p'.repeat(150)}` })).status).toBe(200);
    // 100 creates of 10 items: 1,000 orders; then 900 tracking reads, some of an unknown AWB (404).
    for (let i = 0; i < 100; i++) expect((await api('POST', '/v1/order', createRequest(10))).status).toBe(201);
    for (let i = 0; i < 900; i++) await api('GET', `/v1/order/tracking/${i % 3 === 0 ? 'JN0000000000' : 'SBXDLV00000001'}`);
    await api('POST', '/__sandbox/clock/advance', { ms: 60_000 });
    await api('POST', '/__sandbox/clock/advance', { ms: 8 * HOUR });
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: WINDOW })).newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.setDefaultTimeout(15_000);
    await signIn(page, cli.url, TOKEN);
  }, 170_000);
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await cli?.stop();
  });

  it('holds 1,000 deliveries and a full journal of 1,000 entries', async () => {
    expect((await api('GET', '/__sandbox/webhooks/deliveries?limit=1')).body.total).toBe(1000);
    expect((await api('GET', '/__sandbox/webhooks/deliveries?status=failed&limit=1')).body.total).toBe(500);
    expect((await api('GET', '/__sandbox/requests?limit=1')).body.total).toBe(1000);
  });

  it('shows the deliveries 20 a page, attempts folded, within 3 screen heights and the window width', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByText('1000 deliveries, newest first').waitFor();
    expect(await page.locator('tbody.delivery').count()).toBe(20);
    expect(await page.locator('li.attempt').count()).toBe(0);
    await page.getByText('Page 1 of 50').waitFor();
    const { height, width } = await size(page);
    console.log(`[dashboard] Webhooks, 1,000 deliveries: a page is ${height} x ${width} px in a ${WINDOW.width} x ${WINDOW.height} window`);
    expect(height).toBeLessThan(3 * WINDOW.height);
    expect(width).toBeLessThanOrEqual(WINDOW.width);
    await expectAccessible(page, 'webhooks with 1,000 deliveries');
  });

  it('pages through the deliveries by cursor', async () => {
    const ids = () => page.locator('tbody.delivery td code').allInnerTexts();
    const first = await ids();
    await page.getByRole('navigation', { name: 'Deliveries pages' }).getByRole('button', { name: 'Next page' }).click();
    await page.getByText('Page 2 of 50').waitFor();
    const second = await ids();
    expect(second).toHaveLength(20);
    expect(second.filter((id) => first.includes(id))).toEqual([]);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await page.getByText('Page 1 of 50').waitFor();
    expect(await ids()).toEqual(first);
  });

  it('filters the deliveries by status and event', async () => {
    await page.getByLabel('Delivery status').selectOption('failed');
    await page.getByText('500 deliveries, newest first').waitFor();
    expect(new Set(await page.locator('tbody.delivery .status').allInnerTexts())).toEqual(new Set(['failed']));
    await page.getByLabel('Delivery status').selectOption('');
    await page.getByLabel('Event').selectOption('ping');
    await page.getByText('0 deliveries, newest first').waitFor();
    await page.getByRole('button', { name: 'Send test' }).click();
    await page.getByText('1 delivery, newest first').waitFor();
    expect(await page.locator('tbody.delivery').first().innerText()).toContain('ping');
    await page.getByLabel('Event').selectOption('awb.generated');
    await page.getByText('1000 deliveries, newest first').waitFor();
  });

  it('unfolds the attempts of one delivery when asked, with Redeliver beside it', async () => {
    await page.getByLabel('Delivery status').selectOption('failed');
    await page.getByText('500 deliveries, newest first').waitFor();
    const delivery = page.locator('tbody.delivery').first();
    await delivery.getByRole('button', { name: 'Show attempts (7)' }).click();
    expect(await delivery.locator('li.attempt').count()).toBe(7);
    expect(await page.locator('li.attempt').count()).toBe(7);
    expect(await delivery.getByRole('button', { name: 'Redeliver' }).isVisible()).toBe(true);
    expect((await size(page)).width).toBeLessThanOrEqual(WINDOW.width);
    // Nor does the table scroll sideways in its box: the attempts' long URL and errors wrap.
    const widths = await page.locator('table.deliveries').evaluate((table) => ({ table: Math.round(table.getBoundingClientRect().width), box: table.parentElement!.clientWidth }));
    expect(widths.table).toBeLessThanOrEqual(widths.box);
    await expectAccessible(page, 'webhooks with one delivery unfolded');
    await delivery.getByRole('button', { name: 'Hide attempts (7)' }).click();
    expect(await page.locator('li.attempt').count()).toBe(0);
  });

  it('shows the journal 20 entries a page, within 3 screen heights and the window width', async () => {
    await page.getByRole('link', { name: 'Requests' }).click();
    await page.getByText(/^1000 journaled/).waitFor();
    expect(await page.locator('.journal > li').count()).toBe(20);
    await page.getByText('Page 1 of 50').waitFor();
    const { height, width } = await size(page);
    console.log(`[dashboard] Requests, 1,000 entries: a page is ${height} x ${width} px in a ${WINDOW.width} x ${WINDOW.height} window`);
    expect(height).toBeLessThan(3 * WINDOW.height);
    expect(width).toBeLessThanOrEqual(WINDOW.width);
    await expectAccessible(page, 'requests with 1,000 entries');
  });

  it('pages through the journal, newest first, without gaps or repeats', async () => {
    const ids = async () => (await page.locator('.journal > li summary').allInnerTexts()).map((text) => Number(/(\d+)$/.exec(text)![1]));
    const first = await ids();
    expect(first).toEqual([...first].sort((a, b) => b - a));
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText('Page 2 of 50').waitFor();
    const second = await ids();
    expect(second).toHaveLength(20);
    expect(second[0]).toBe(first.at(-1)! - 1);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await page.getByText('Page 1 of 50').waitFor();
  });

  it('filters the journal by status and by operation', async () => {
    await page.getByLabel('Status').fill('404');
    // A poll re-renders the view while the reader is still typing: what is typed stays.
    await page.waitForResponse((response) => response.url().includes('/__sandbox/requests'));
    await page.waitForTimeout(100);
    expect(await page.getByLabel('Status').inputValue()).toBe('404');
    await page.getByLabel('Status').press('Enter');
    await page.getByText(/^300 journaled/).waitFor();
    expect(new Set(await page.locator('.journal .code').allInnerTexts())).toEqual(new Set(['404']));
    await page.getByLabel('Status').fill('');
    await page.getByLabel('Status').press('Enter');
    await page.getByLabel('Operation').fill('createOrder');
    await page.getByLabel('Operation').press('Enter');
    await page.getByText(/^100 journaled/).waitFor();
    expect(new Set(await page.locator('.journal > li strong').allInnerTexts())).toEqual(new Set(['POST /v1/order']));
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText('Page 2 of 5').waitFor();
    expect(await page.locator('.journal > li').count()).toBe(20);
  });

  it('fits the readiness report in the window, its reasons wrapped', async () => {
    await page.getByRole('link', { name: 'Readiness' }).click();
    const summary = page.locator('p.summary').filter({ hasText: 'handled' });
    await summary.waitFor();
    expect(await summary.innerText()).toMatch(/^[\d.]+% handled \(\d+ of \d+ graded items; \d+ not handled, \d+ not exercised\)$/);
    await page.getByRole('table', { name: 'Catalogue items' }).waitFor();
    expect((await size(page)).width).toBeLessThanOrEqual(WINDOW.width);
    const table = await page.getByRole('table', { name: 'Catalogue items' }).boundingBox();
    expect(table!.x + table!.width).toBeLessThanOrEqual(WINDOW.width);
    await expectAccessible(page, 'readiness');
  });

  it('shows the Status of every order on a phone', async () => {
    await page.setViewportSize(PHONE);
    await page.getByRole('link', { name: 'Orders', exact: true }).click();
    const status = page.getByRole('columnheader', { name: 'Status', exact: true });
    await status.waitFor();
    const box = await status.boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE.width);
    const cell = await page.locator('table.orders tbody tr').first().locator('.status').boundingBox();
    expect(cell!.x + cell!.width).toBeLessThanOrEqual(PHONE.width);
    // Nor is the AWB cut off in the table's scroll box.
    const widths = await page.locator('table.orders').evaluate((table) => ({ box: table.parentElement!.clientWidth, content: table.parentElement!.scrollWidth }));
    expect(widths.content, JSON.stringify(widths)).toBeLessThanOrEqual(widths.box);
    expect((await size(page)).width).toBeLessThanOrEqual(PHONE.width);
    await page.setViewportSize(WINDOW);
  });

  it('keeps an event name, a status and an order number whole in the deliveries, at the window width and on a phone', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    for (const viewport of [WINDOW, PHONE]) {
      await page.setViewportSize(viewport);
      const row = page.locator('tbody.delivery').filter({ has: page.getByText('awb.generated') }).first();
      await row.waitFor();
      for (const [what, cell] of [['event', row.locator('td').first()], ['status', row.locator('.status')], ['order number', row.getByRole('link')]] as const) {
        expect(await lines(cell), `${what} at ${viewport.width} px`).toBe(1);
      }
    }
    await page.setViewportSize(WINDOW);
  });

  it('shows the deliveries on a phone as cards of labelled fields, a page of 20 within 8 screen heights', async () => {
    await page.setViewportSize(PHONE);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const table = page.getByRole('table', { name: 'Webhook deliveries' });
    await table.waitFor();
    const first = page.locator('tbody.delivery').first();
    const labels = await first.locator('td[data-label]').evaluateAll((cells) => cells.map((c) => getComputedStyle(c, '::before').content));
    expect(labels).toEqual(['"Event"', '"Endpoint"', '"Status"', '"Order"', '"Delivery id"', '"Created"', '"Attempts"']);
    const box = (await table.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
    expect(box.height).toBeLessThanOrEqual(8 * PHONE.height);
    expect((await size(page)).width).toBeLessThanOrEqual(PHONE.width);
    await expectAccessible(page, 'webhooks on a phone with 1,000 deliveries');
    await page.setViewportSize(WINDOW);
  });

  it('has a favicon, and the console shows no error', async () => {
    const icon = await fetch(`${cli.url}/dashboard/app/favicon.svg`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await page.locator('link[rel="icon"]').getAttribute('href')).toBe('/dashboard/app/favicon.svg');
    expect(consoleErrors).toEqual([]);
  });
});
