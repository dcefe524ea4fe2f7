// Screenshots of every dashboard view for the manual (npm run screenshots): a sandbox with a
// fixed seed and a manual clock at a fixed start, a few orders driven through the APIs, then
// Debian's Chromium at 1280x800 (and one view at phone width). Writes docs/dashboard/*.png.
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Page } from 'playwright-core';
import { createSandbox } from '../src/index.js';

const OUT = new URL('../docs/dashboard/', import.meta.url);
const TOKEN = 'partner-a';
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

const sandbox = await createSandbox({
  clock: 'manual',
  clockStart: '2026-11-23T08:00:00Z',
  seed: 'screenshots',
  awbDelay: '1m',
  port: 0,
  clients: [{ token: TOKEN, id: 'partner-a', name: 'Partner A', webhook: { url: hookUrl } }],
});

async function api<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const response = await fetch(`${sandbox.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await response.json()) as T;
}

interface CreateRequest { items: Record<string, string>[] }
const spec = await api<{ paths: Record<string, { post: { requestBody: { content: Record<string, { examples: Record<string, { value: CreateRequest }> }> } } }> }>('GET', '/__sandbox/openapi.json');
const example = spec.paths['/v1/order']!.post.requestBody.content['application/json']!.examples.twoParcels!.value;
const orders: string[] = [];
for (const [i, scenario] of ['delivered', 'failed_attempt', 'returned', 'stuck', 'awb_failed', 'cancelled', 'delivered'].entries()) {
  const item = { ...example.items[i % 2], order_code: `INV-2026-${String(i + 1).padStart(4, '0')}` };
  const created = await api<{ order_numbers?: string[] }>('POST', '/v1/order', { ...example, items: [item] }, { 'X-Sandbox-Scenario': scenario });
  orders.push(...(created.order_numbers ?? []));
  await sandbox.clock.advance(7 * 60_000);
}
await api('POST', '/v1/order', { ...example, items: [{ ...example.items[0], item_weight: 'heavy' }] });
await sandbox.clock.advance(5 * 3_600_000);
await api('POST', `/__sandbox/orders/${orders[0]}/advance`);
await api('POST', `/__sandbox/orders/${orders[0]}/advance`);
const { awb } = await api<{ awb: string }>('GET', `/__sandbox/orders/${orders[0]}`);
await api('GET', `/v1/order/tracking/${awb}`);
await api('POST', '/__sandbox/checks'); // the Readiness view then has its check.* items

mkdirSync(OUT, { recursive: true });
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });

async function shoot(page: Page, name: string, hash: string | null, ready: string): Promise<void> {
  if (hash !== null) await page.goto(`${sandbox.url}/dashboard#/${hash}`);
  await page.getByText(ready).first().waitFor();
  await page.screenshot({ path: new URL(`${name}.png`, OUT).pathname, fullPage: false });
  console.log(`docs/dashboard/${name}.png`);
}

try {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await page.goto(`${sandbox.url}/dashboard`);
  await page.getByLabel('Token').fill(TOKEN);
  await shoot(page, 'sign-in', null, 'Sign in');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await shoot(page, 'orders', 'orders', orders[0]!);
  await shoot(page, 'order', `orders/${orders[0]}`, 'Tracking answer');
  await page.goto(`${sandbox.url}/dashboard#/webhooks`);
  await page.getByRole('button', { name: /^Show attempts/ }).first().click();
  await page.getByText('Request and response of attempt 1').first().click();
  await page.getByText('Request headers').first().scrollIntoViewIfNeeded();
  await shoot(page, 'webhooks', null, 'Request headers');
  await shoot(page, 'clock', 'clock', 'Sandbox time');
  await shoot(page, 'scenarios', 'scenarios', 'Create order');
  await shoot(page, 'requests', 'requests', 'Spec violations');
  await shoot(page, 'readiness', 'report', 'Catalogue items');
  await page.setViewportSize({ width: 390, height: 844 });
  await shoot(page, 'order-phone', `orders/${orders[0]}`, 'Timeline');
  await shoot(page, 'orders-phone', 'orders', orders[0]!);
  await page.goto(`${sandbox.url}/dashboard#/webhooks`);
  await page.locator('tbody.delivery').first().waitFor();
  await page.getByRole('heading', { name: 'Deliveries' }).evaluate((heading) => heading.scrollIntoView());
  await shoot(page, 'webhooks-phone', null, 'Deliveries');
} finally {
  await browser.close();
  await sandbox.close();
  receiver.close();
}
