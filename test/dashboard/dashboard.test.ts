import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/index.js';
import { createRequest, item } from '../support/orders.js';
import { Receiver } from '../webhooks/receiver.js';
import { expectAccessible, hasChromium, openPage, signIn, warnIfNoChromium } from './browser.js';

warnIfNoChromium('dashboard');

const TOKEN_A = 'dashboard-token-a';
const TOKEN_B = 'dashboard-token-b';
/** A read_only token of client-a: it may read everything of client-a's, and change nothing. */
const READER_A = 'dashboard-reader-a';
/** Partner-controlled text that would run script if it were rendered as HTML. */
const XSS = '<img src=x onerror="window.__xss=1">';

describe.skipIf(!hasChromium)('/dashboard in headless Chromium', () => {
  let sandbox: Sandbox;
  let receiver: Receiver;
  let browser: Browser;
  let page: Page;
  let orderNo: string;
  const ADMIN = 'dashboard-admin-token';
  const offOrigin: string[] = [];
  let pageErrors: string[];

  beforeAll(async () => {
    sandbox = await createSandbox({
      clock: 'manual',
      clockStart: '2026-11-23T08:00:00Z',
      seed: 'dashboard',
      awbDelay: '1m',
      port: 0,
      clients: [
        { token: TOKEN_A, id: 'client-a' },
        { token: TOKEN_B, id: 'client-b' },
        { token: READER_A, id: 'client-a', role: 'read_only' },
      ],
      adminTokens: [ADMIN],
    });
    receiver = await Receiver.start();
    // Every webhook answer carries the payload too: the response body is partner-controlled text.
    receiver.respond = () => ({ status: 200, body: `thanks ${XSS}` });
    ({ browser, page, pageErrors } = await openPage());
    page.on('request', (req) => {
      if (!req.url().startsWith(sandbox.url) && !req.url().startsWith('data:')) offOrigin.push(req.url());
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await sandbox?.close();
  });

  it("is served with Content-Security-Policy: default-src 'self', and no other origin may frame it", async () => {
    const response = await page.goto(`${sandbox.url}/dashboard`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toBe("default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'");
    await page.getByLabel('Token').waitFor();
    // Where a token comes from, for someone who has only the URL.
    expect(await page.locator('.signin').innerText()).toMatch(/npm start prints one \(the token: line of its banner/);
    await expectAccessible(page, 'sign in');
  });

  it('shows the error of a wrong token and stays on the sign-in form', async () => {
    await page.getByLabel('Token').fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toContain('401');
    expect(await alert.innerText()).toContain('unknown token');
    expect(await page.getByRole('heading', { name: 'Orders' }).count()).toBe(0);
  });

  it('signs in with a token kept for the tab only', async () => {
    await signIn(page, sandbox.url, TOKEN_A);
    // The token, and what the sandbox said the token is (its role, to offer only what it may do).
    expect(await page.evaluate(() => ({ ...sessionStorage }))).toEqual({ 'sandbox-dashboard-token': TOKEN_A, 'sandbox-dashboard-who': JSON.stringify({ role: 'partner', sandbox_wide: false }) });
    expect(await page.evaluate(() => Object.values(localStorage))).toEqual([]);
    await expectAccessible(page, 'orders (empty)');
  });

  it('sets the webhook URL to a receiver', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Save URL' }).click();
    await page.getByRole('status').filter({ hasText: `Webhooks go to ${receiver.url}` }).waitFor();
    await expectAccessible(page, 'webhooks');
  });

  it('lists every endpoint with its URL, state and filter; adds, disables and deletes one', async () => {
    const staging = 'http://127.0.0.1:9/staging';
    await page.getByLabel('URL for a new endpoint').fill(staging);
    await page.getByRole('checkbox', { name: 'awb.failed' }).check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('status').filter({ hasText: /^Endpoint ep_\w+ added: awb\.failed$/ }).waitFor();
    const rows = page.locator('tbody.endpoint');
    await rows.nth(1).waitFor();
    expect(await rows.nth(0).innerText()).toMatch(new RegExp(`default[\\s\\S]*${receiver.url}[\\s\\S]*enabled[\\s\\S]*every event`));
    expect(await rows.nth(1).innerText()).toMatch(new RegExp(`ep_\\w+[\\s\\S]*${staging}[\\s\\S]*enabled[\\s\\S]*awb\\.failed`));
    await expectAccessible(page, 'webhooks with two endpoints');
    const id = (await rows.nth(1).locator('td').first().innerText()).trim();
    await rows.nth(1).getByRole('button', { name: `Disable ${id}` }).click();
    await rows.nth(1).getByText('disabled through the control API').waitFor();
    await rows.nth(1).getByRole('button', { name: `Delete ${id}` }).click();
    await page.waitForFunction(() => document.querySelectorAll('tbody.endpoint').length === 1);
    // The row goes with the endpoint; its result stays, in place of the earlier "added".
    await page.getByRole('status').filter({ hasText: `Endpoint ${id} deleted` }).waitFor();
    expect(await page.getByRole('status').filter({ hasText: 'added' }).count()).toBe(0);
  });

  it('shows the field errors of a create the API rejects', async () => {
    await page.getByRole('link', { name: 'Scenarios' }).click();
    await page.getByLabel('Item weight (kg)').fill('heavy');
    await page.getByRole('button', { name: 'Create order' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toMatch(/^400 /);
    expect(await alert.innerText()).toContain('items[0].item_weight');
    await page.getByLabel('Item weight (kg)').fill('1.5');
  });

  it('creates an order from the New order form and opens its page', async () => {
    await page.getByRole('heading', { name: 'New order' }).waitFor();
    await page.getByRole('heading', { name: 'delivered', level: 2 }).waitFor();
    expect(await page.getByLabel('Sender name').inputValue()).toBe('Toko Sinar Jaya');
    await page.getByLabel('Scenario').selectOption('delivered');
    await page.getByLabel('Receiver name').fill(XSS);
    await page.getByLabel('Order code').fill('DASH-0001');
    await expectAccessible(page, 'scenarios');
    await page.getByRole('button', { name: 'Create order' }).click();
    const heading = page.getByRole('heading', { name: /^Order \d+$/, level: 1 });
    await heading.waitFor();
    orderNo = (await heading.innerText()).replace('Order ', '');
    expect(page.url()).toContain(`#/orders/${orderNo}`);
    await page.getByText('DASH-0001', { exact: true }).waitFor();
  });

  it('sees the order in the list, linked to its page', async () => {
    await page.getByRole('link', { name: 'Orders', exact: true }).click();
    const link = page.getByRole('link', { name: orderNo });
    await link.waitFor();
    const row = page.getByRole('row').filter({ has: link });
    expect(await row.innerText()).toContain('delivered');
    expect(await row.innerText()).toContain('created');
    await expectAccessible(page, 'orders');
    await page.getByLabel('Order number, AWB or order code').fill('DASH-0001');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('1 order', { exact: true }).waitFor();
    await link.click();
    await page.getByRole('heading', { name: `Order ${orderNo}` }).waitFor();
  });

  it('shows partner-controlled text as text, never as HTML', async () => {
    // Rendered as HTML it would be an <img> element (its onerror is also blocked by the CSP).
    const receiver = page.locator('.details dd', { hasText: XSS });
    await receiver.waitFor();
    expect(await receiver.innerText()).toContain(`${XSS}\nJl. Setiabudi No. 45, Bandung`);
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
  });

  it('generates the AWB and advances the order to delivered, with its timeline and tracking answer', async () => {
    await expectAccessible(page, 'order');
    await page.getByRole('button', { name: 'Generate AWB now' }).click();
    const result = page.getByRole('status').filter({ hasText: /^AWB / });
    await result.waitFor();
    const awb = /^AWB (\S+)/.exec(await result.innerText())![1]!;
    for (let step = 0; step < 20; step++) {
      const status = page.locator('.details .status').first();
      if ((await status.innerText()) === 'delivered') break;
      // The last advance may have delivered it before the details showed so: the button says.
      const advance = page.getByRole('button', { name: 'Advance to next step' });
      if (await advance.isDisabled()) break;
      await advance.click();
      await page.getByRole('status').filter({ hasText: /^Played / }).waitFor();
      await page.locator('.actions[aria-busy="false"]').waitFor();
    }
    await page.locator('.details .status', { hasText: /^delivered$/ }).waitFor();
    for (const name of ['Generate AWB now', 'Advance to next step', 'Cancel order']) expect(await page.getByRole('button', { name }).isDisabled(), name).toBe(true);
    await page.getByText('The order is delivered: nothing is left to do.').waitFor();
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    expect(await page.getByText('Nothing is left to play.').isVisible()).toBe(true);
    const played = page.locator('.timeline li');
    expect(await played.count()).toBeGreaterThan(5);
    expect(await played.first().innerText()).toMatch(/^2026-11-23 \d\d:\d\d:\d\dZ\nPick up scan/);
    expect(await played.last().innerText()).toContain('POD scan');
    await page.getByText(`GET /v1/order/tracking/${awb}`).waitFor();
    const tracking = JSON.parse(await page.locator('pre.json').last().innerText()) as { last_status: string; history: unknown[] };
    expect(tracking.last_status).toBe('2');
    expect(tracking.history).toHaveLength(await played.count());
  });

  it("shows the tracking answer as the client got it when a fault rule answers with a body of its own", async () => {
    const rule = await fetch(`${sandbox.url}/__sandbox/faults`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN_A}`, 'content-type': 'application/json' },
      body: JSON.stringify({ match: { operation_id: 'trackOrder' }, action: { type: 'status', status: 500, body: { error_code: 'E42', detail: 'upstream down' } }, times: 1 }),
    });
    expect(rule.status).toBe(201);
    await page.reload();
    await page.getByRole('heading', { name: 'Tracking answer' }).waitFor();
    await page.locator('p', { hasText: /GET \/v1\/order\/tracking\/\S+ → 500/ }).waitFor();
    expect(JSON.parse(await page.locator('pre.json').last().innerText())).toEqual({ error_code: 'E42', detail: 'upstream down' });
    // A partner's 401 on a provider path is an answer to show, not a refused token: the user stays signed in.
    const refusal = { success: false, message: 'Your token was rotated: sign in again at evil.example', errors: [null, 'x'] };
    await fetch(`${sandbox.url}/__sandbox/faults`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN_A}`, 'content-type': 'application/json' },
      body: JSON.stringify({ match: { operation_id: 'trackOrder' }, action: { type: 'status', status: 401, body: refusal }, times: 1 }),
    });
    await page.reload();
    await page.locator('p', { hasText: /GET \/v1\/order\/tracking\/\S+ → 401/ }).waitFor();
    expect(JSON.parse(await page.locator('pre.json').last().innerText())).toEqual(refusal);
    expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
  });

  it('refuses an empty Advance by box in the page, and sends nothing', async () => {
    await page.getByRole('link', { name: 'Clock' }).click();
    await page.getByRole('heading', { name: 'Clock' }).waitFor();
    const clock = async () => (await (await fetch(`${sandbox.url}/__sandbox/clock`, { headers: { authorization: `Bearer ${TOKEN_A}` } })).json()) as { now: string };
    const before = await clock();
    const advances: string[] = [];
    const record = (request: { method: () => string; url: () => string }) => void (request.url().includes('/__sandbox/clock/advance') && advances.push(request.method()));
    page.on('request', record);
    await page.getByLabel('Advance by').fill('');
    await page.getByRole('button', { name: 'Advance', exact: true }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toBe('Give how many minutes to advance by (a number from 0 to 525600, a year): nothing was sent.');
    expect(await page.getByLabel('Advance by').getAttribute('aria-invalid')).toBe('true');
    await page.waitForTimeout(300);
    page.off('request', record);
    expect(advances).toEqual([]);
    expect(await page.getByRole('status').filter({ hasText: 'Advanced' }).count()).toBe(0);
    expect((await clock()).now).toBe(before.now);
    await page.getByLabel('Advance by').fill('30');
    expect(await page.getByRole('alert').count()).toBe(0);
  });

  it('shows the AWB webhook with its attempt, and Redeliver makes a new attempt visible', async () => {
    await page.getByRole('link', { name: 'Clock' }).click();
    await page.getByRole('heading', { name: 'Clock' }).waitFor();
    await expectAccessible(page, 'clock');
    await page.getByRole('button', { name: 'Advance 1 hour' }).click();
    await page.getByRole('status').filter({ hasText: 'Advanced 1 hour' }).waitFor();
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const delivery = page.locator('tbody.delivery', { hasText: 'awb.generated' });
    await delivery.waitFor({ timeout: 15_000 });
    expect(await delivery.innerText()).toContain('delivered');
    expect(await delivery.getByRole('heading', { name: 'Attempt 1' }).count()).toBe(0); // folded until asked for
    await delivery.getByRole('button', { name: 'Show attempts (1)' }).click();
    await delivery.getByRole('heading', { name: 'Attempt 1' }).waitFor();
    expect(await delivery.innerText()).toMatch(/Response: 200 in \d+ ms/);
    expect(receiver.received.some((r) => r.json.event === 'awb.generated' && r.json.order_no === orderNo)).toBe(true);
    await delivery.getByText('Request and response of attempt 1').click();
    expect(await delivery.innerText()).toContain(`thanks ${XSS}`);
    expect(await page.locator('img').count()).toBe(0);
    await delivery.getByRole('button', { name: 'Redeliver' }).click();
    await delivery.getByRole('heading', { name: 'Attempt 2' }).waitFor();
    expect(await delivery.getByText('(redeliver)').count()).toBe(1);
    expect(receiver.received.filter((r) => r.json.event === 'awb.generated')).toHaveLength(2);
  });

  it('rotates the secret and sends a test ping', async () => {
    const secret = page.locator('code.secret');
    const before = await secret.innerText();
    const endpointBefore = await (await fetch(`${sandbox.url}/__sandbox/webhooks/endpoints/default`, { headers: { authorization: `Bearer ${TOKEN_A}` } })).json();
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('status').filter({ hasText: 'Secret rotated' }).waitFor();
    await page.waitForFunction((old) => document.querySelector('code.secret')?.textContent !== old, before);
    expect(await secret.innerText()).toMatch(/^whsec_/);
    // Only the secret changed: the URL, where it came from and its state stay.
    const endpointAfter = await (await fetch(`${sandbox.url}/__sandbox/webhooks/endpoints/default`, { headers: { authorization: `Bearer ${TOKEN_A}` } })).json();
    expect({ ...endpointAfter, secret: undefined, updated_at: undefined }).toEqual({ ...endpointBefore, secret: undefined, updated_at: undefined });
    await page.getByRole('button', { name: 'Send test' }).click();
    await page.getByRole('status').filter({ hasText: /^Test ping msg_\w+: 200$/ }).waitFor();
    await page.locator('tbody.delivery', { hasText: 'ping' }).first().waitFor();
    expect(receiver.received.at(-1)?.json.event).toBe('ping');
  });

  it('shows the request journal with the rejected create highlighted, filterable', async () => {
    await page.getByRole('link', { name: 'Requests' }).click();
    await page.getByRole('heading', { name: 'Requests' }).waitFor();
    const creates = page.locator('.journal > li', { hasText: 'POST /v1/order →' });
    await creates.nth(1).waitFor();
    expect(await creates.count()).toBe(2);
    const rejected = page.locator('.journal > li.violation');
    expect(await rejected.count()).toBe(1);
    expect(await rejected.innerText()).toContain('1 spec violation');
    await rejected.getByText('1 spec violation').click();
    expect(await rejected.innerText()).toContain('items[0].item_weight');
    await page.getByText(`GET /v1/order/tracking/`).first().waitFor();
    await expectAccessible(page, 'requests');
    await page.getByLabel('Only spec violations').check();
    await page.waitForFunction(() => document.querySelectorAll('.journal > li').length === 1);
    expect(await page.locator('.journal > li').innerText()).toContain('POST /v1/order → 400');
  });

  it('pages the list, follows orders as they progress, and cancels an order from its page', async () => {
    const created = await fetch(`${sandbox.url}/v1/order`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN_A}`, 'Content-Type': 'application/json', 'X-Sandbox-Scenario': 'delivered' },
      body: JSON.stringify(createRequest(21)),
    });
    const { order_numbers: numbers } = (await created.json()) as { order_numbers: string[] };
    await page.getByRole('link', { name: 'Orders', exact: true }).click();
    await page.getByText('22 orders', { exact: true }).waitFor();
    expect(await page.locator('tbody tr').count()).toBe(20);
    // Newest first: the first row is one of this create's orders (which share its time; ids are random).
    const firstRow = await page.locator('tbody tr').first().innerText();
    expect(numbers.some((number) => firstRow.includes(number))).toBe(true);
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByRole('link', { name: orderNo }).waitFor();
    expect(await page.locator('tbody tr').count()).toBe(2);
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Previous page' }).click();
    const first = page.getByRole('row').filter({ has: page.getByRole('link', { name: numbers.at(-1)! }) });
    await first.waitFor();
    expect(await first.innerText()).toContain('created');
    await sandbox.clock.advance(60_000); // the AWBs fall due; the list shows it without a reload
    await first.getByText('awb_generated').waitFor();
    await first.getByRole('link').click();
    await page.getByRole('button', { name: 'Cancel order' }).click();
    await page.getByRole('status').filter({ hasText: /cancel/i }).waitFor();
    await page.locator('.details .status', { hasText: /^cancelled$/ }).waitFor();
    // Nothing is left to do to a cancelled order: its actions are not offered again.
    for (const name of ['Generate AWB now', 'Advance to next step', 'Cancel order']) expect(await page.getByRole('button', { name }).isDisabled(), name).toBe(true);
    await page.getByText('The order is cancelled: nothing is left to do.').waitFor();
  });

  it('shows no AWB due for an order cancelled before its AWB, in the list and on its page', async () => {
    const post = async (path: string, body: unknown) =>
      (await fetch(`${sandbox.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN_A}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
    const { order_numbers: [cancelled] } = (await post('/v1/order', createRequest(1))) as { order_numbers: string[] };
    expect(await post('/v1/order/cancel', { order_no: cancelled })).toMatchObject({ success: true });
    await page.goto(`${sandbox.url}/dashboard#/orders`);
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: cancelled! }) });
    await row.getByText('cancelled', { exact: true }).waitFor();
    expect(await row.innerText()).toContain('none: cancelled before it');
    expect(await row.innerText()).not.toContain('due');
    await page.goto(`${sandbox.url}/dashboard#/orders/${cancelled}`);
    await page.getByText('The order is cancelled: nothing is left to do.').waitFor();
    expect(await page.locator('.details').innerText()).toMatch(/AWB\s+none: cancelled before it/);
  });

  it('fits a phone-width screen, the orders table with its widest status and AWB whole', async () => {
    // The widest status (delivery_failed) beside the longest AWB (J&T's: JP and 12 digits).
    const call = async (path: string, body: unknown, headers: Record<string, string> = {}) =>
      (await fetch(`${sandbox.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN_A}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })).json();
    const { order_numbers: [failed] } = (await call('/v1/order', createRequest(1, { courier_code: 'jnt' }), { 'X-Sandbox-Scenario': 'failed_attempt' })) as { order_numbers: string[] };
    await call(`/__sandbox/orders/${failed}/awb`, {});
    const { status, awb } = (await call(`/__sandbox/orders/${failed}/advance`, { step: 'attempt_failed' })) as { status: string; awb: string };
    expect({ status, awb: awb.length }).toEqual({ status: 'delivery_failed', awb: 14 });
    const PHONE = 360;
    await page.setViewportSize({ width: PHONE, height: 780 });
    for (const view of ['orders', `orders/${orderNo}`, 'webhooks']) {
      await page.goto(`${sandbox.url}/dashboard#/${view}`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      if (view === 'orders') {
        const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: failed }) });
        await row.getByText(awb, { exact: true }).waitFor();
        // Nothing of the table is cut off in its scroll box: the AWB is there to read whole.
        const widths = await page.locator('table.orders').evaluate((table) => ({ table: Math.ceil(table.getBoundingClientRect().width), box: table.parentElement!.clientWidth, content: table.parentElement!.scrollWidth }));
        expect(widths.content, JSON.stringify(widths)).toBeLessThanOrEqual(widths.box);
        const cell = (await row.getByText(awb, { exact: true }).boundingBox())!;
        expect(cell.x + cell.width).toBeLessThanOrEqual(PHONE);
        expect(await row.locator('.status').innerText()).toMatch(/^delivery_\s*failed$/);
      }
      expect(await page.evaluate(() => document.documentElement.scrollWidth), view).toBeLessThanOrEqual(PHONE);
      await expectAccessible(page, `${view} at phone width`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("does not show another client's order", async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Token').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await signIn(page, sandbox.url, TOKEN_B);
    await page.getByText('0 orders').waitFor();
    expect(await page.getByRole('link', { name: orderNo }).count()).toBe(0);
    await page.goto(`${sandbox.url}/dashboard#/orders/${orderNo}`);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toContain('404');
  });

  it('offers a read_only token no action on any view, says why, and still shows everything', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, sandbox.url, READER_A);
    await page.getByText('Signed in with a read_only token: everything is shown, and no action is offered.').waitFor();
    const views: Array<[string, string, string[]]> = [
      [`orders/${orderNo}`, 'Timeline', ['Generate AWB now', 'Advance to next step', 'Cancel order']],
      ['webhooks', 'Deliveries', ['Save URL', 'Rotate secret', 'Send test', 'Redeliver', 'Add endpoint', 'Disable default']],
      ['clock', 'Sandbox time', ['Advance 1 hour', 'Advance 1 day', 'Advance', 'Set speed']],
      ['scenarios', 'delivered', ['Create order']],
      ['report', 'Catalogue items', ['Run checks', 'Start run']],
    ];
    for (const [view, shown, actions] of views) {
      await page.goto(`${sandbox.url}/dashboard#/${view}`);
      await page.getByText(shown).first().waitFor();
      for (const name of actions) expect(await page.getByRole('button', { name, exact: true }).count(), `${view}: ${name}`).toBe(0);
    }
    // What it reads is there: client-a's deliveries, and the default endpoint's URL as text.
    await page.goto(`${sandbox.url}/dashboard#/webhooks`);
    await page.locator('tbody.delivery').first().waitFor();
    await page.getByText(`Endpoint URL: ${receiver.url}`).waitFor();
  });

  it('lets an admin token pick the client it shows, and act for it', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    // Signing in asks what the token is: nothing is refused on the way (no 400 for want of X-Sandbox-Client).
    const refused: string[] = [];
    const record = (response: { status: () => number; url: () => string }) => void (response.status() >= 400 && refused.push(`${response.status()} ${response.url()}`));
    page.on('response', record);
    await signIn(page, sandbox.url, ADMIN);
    page.off('response', record);
    expect(refused).toEqual([]);
    const picker = page.getByLabel('Client');
    await picker.waitFor();
    expect(await picker.inputValue()).toBe('client-a');
    await page.goto(`${sandbox.url}/dashboard#/orders/${orderNo}`);
    await page.getByRole('heading', { name: new RegExp(orderNo) }).first().waitFor();
    await page.getByLabel('Client').selectOption('client-b');
    await page.getByText('0 orders').waitFor();
    await page.goto(`${sandbox.url}/dashboard#/orders/${orderNo}`);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toContain('404');
    // A manual clock has no speed: the form is not offered; the admin advances client-b's clock.
    await page.getByRole('link', { name: 'Clock' }).click();
    await page.getByRole('button', { name: 'Advance 1 hour' }).click();
    await page.getByText(/Advanced 1 hour/).waitFor();
    expect(await page.getByRole('button', { name: 'Set speed' }).count()).toBe(0);
  });

  it('shows the readiness report of the client, the error of checks it cannot run, and runs them against another endpoint', async () => {
    const created = await fetch(`${sandbox.url}/__sandbox/webhooks/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN_B}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url }),
    });
    const { id } = (await created.json()) as { id: string };
    // One whose events filter leaves out awb.generated cannot be graded: it is not offered.
    const filtered = await fetch(`${sandbox.url}/__sandbox/webhooks/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN_B}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['order.cancelled'] }),
    });
    expect(filtered.status).toBe(201);
    // A malformed AWB read twice unchanged by client-b itself: a miss, shown with what was sent.
    for (let n = 0; n < 2; n += 1) expect((await fetch(`${sandbox.url}/v1/order/tracking/bad!`, { headers: { authorization: `Bearer ${TOKEN_B}` } })).status).toBe(400);
    // A create refused once and not followed up yet: not handled, with no miss; shown by the request that exercised it.
    const refused = await fetch(`${sandbox.url}/v1/order`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN_B}`, 'content-type': 'application/json' }, body: '{}' });
    expect(refused.status).toBe(400);
    await page.getByRole('link', { name: 'Readiness' }).click();
    await page.getByRole('heading', { name: 'Readiness', level: 1 }).waitFor();
    await page.getByText(/% handled/).waitFor();
    expect(await page.getByRole('table', { name: 'Catalogue items' }).getByRole('row').count()).toBeGreaterThan(20);
    // Every provider operation, with its documented statuses (a header row and twelve operations).
    const operations = page.getByRole('table', { name: 'Provider operations' });
    expect(await operations.getByRole('row').count()).toBe(13);
    expect(await operations.getByRole('row', { name: /POST \/v1\/order\/cancel/ }).innerText()).toMatch(/200: (\d+×|not exercised), 400: .*503: /);
    await page.getByText(/% coverage/).waitFor();
    const missed = page.getByRole('table', { name: 'Catalogue items' }).getByRole('row', { name: /Tracking 400 Bad Request/ });
    expect(await missed.innerText()).toMatch(/Missed 1 of 2[\s\S]*Last missed:\s+\d{4}-\d\d-\d\dT[\d:.]+Z .*sent again unchanged: GET \/v1\/order\/tracking\/bad!/);
    const waiting = page.getByRole('table', { name: 'Catalogue items' }).getByRole('row', { name: /Create Order 400 Bad Request/ });
    expect(await waiting.innerText()).toMatch(/Exercised 1 time[\s\S]*Last exercised \(no handling seen after it\):\s+\d{4}-\d\d-\d\dT[\d:.]+Z .*POST \/v1\/order/);
    await page.getByRole('button', { name: 'Run checks' }).click(); // client-b has no webhook URL: 409
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toMatch(/409|webhook/i);
    const before = receiver.received.length;
    expect(await page.getByLabel('Endpoint to check').locator('option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value))).toEqual(['default', id]);
    await page.getByLabel('Endpoint to check').selectOption(id);
    await page.getByRole('button', { name: 'Run checks' }).click();
    await page.getByRole('status').filter({ hasText: `Checks run against endpoint ${id}` }).waitFor();
    expect(receiver.received.length - before).toBe(5);
    await expectAccessible(page, 'readiness');
  });

  it('goes back to the sign-in form, saying why, once the signed-in token is refused (rotated, or the sandbox restarted with others)', async () => {
    await page.evaluate(() => sessionStorage.clear());
    await page.goto(`${sandbox.url}/dashboard#/orders`);
    await page.reload();
    await page.getByLabel('Token').fill(TOKEN_A);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Orders', level: 1 }).waitFor();
    // Swapped on a page of the same origin (the same tab's sessionStorage) that polls nothing: a poll of the
    // orders view sent with the swapped token before the reload would sign the tab out there, reason and all.
    await page.goto(`${sandbox.url}/dashboard/app/favicon.svg`);
    await page.evaluate(() => {
      for (const key of Object.keys(sessionStorage)) if (sessionStorage.getItem(key) === 'dashboard-token-a') sessionStorage.setItem(key, 'a-token-no-longer-known');
    });
    await page.goto(`${sandbox.url}/dashboard#/orders`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.getByRole('alert').innerText()).toContain('401');
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([]);
  });

  it('ran no script error and loaded nothing from outside the sandbox', () => {
    expect(pageErrors).toEqual([]);
    expect(offOrigin).toEqual([]);
  });
});

describe.skipIf(!hasChromium)('/dashboard for an admin whose client is gone after a restart', () => {
  const ADMIN = 'gone-admin-token';
  // A fixed port: the restarted sandbox must be the same origin, whose sessionStorage keeps the choice.
  const port = 42000 + Math.floor(Math.random() * 1000);
  const start = (ids: string[]) => createSandbox({ clock: 'manual', port, clients: ids.map((id) => ({ token: `${id}-token`, id })), adminTokens: [ADMIN] });
  let sandbox: Sandbox;
  let browser: Browser;
  let page: Page;
  /** The X-Sandbox-Client of each GET /__sandbox/clients the page sent ('' for none). */
  const clientsAsked: string[] = [];
  let pageErrors: string[];

  beforeAll(async () => {
    sandbox = await start(['alpha', 'beta']);
    ({ browser, page, pageErrors } = await openPage());
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/__sandbox/clients') clientsAsked.push(request.headers()['x-sandbox-client'] ?? '');
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
  });

  it('drops the chosen client once the sandbox has it no more, says so, and offers the picker again', async () => {
    await signIn(page, sandbox.url, ADMIN);
    await page.getByLabel('Client').selectOption('beta');
    await page.getByText('0 orders').waitFor();
    expect(await page.getByLabel('Client').inputValue()).toBe('beta');
    await sandbox.close();
    sandbox = await start(['alpha']);
    // The view's next poll is refused (400 for X-Sandbox-Client): the choice is forgotten and the picker says why.
    const gone = page.getByText('Client "beta" is no longer in this sandbox: pick one.');
    await gone.waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('sandbox-dashboard-client'))).toBeNull();
    // A reload keeps the picker and the note: the list of clients is asked for without the gone client.
    await page.reload();
    await gone.waitFor();
    expect(await page.getByLabel('Client').locator('option').allInnerTexts()).toEqual(['Pick a client', 'alpha']);
    expect(clientsAsked.length).toBeGreaterThanOrEqual(3);
    expect(clientsAsked).toEqual(clientsAsked.map(() => ''));
    await page.getByLabel('Client').selectOption('alpha');
    await page.getByText('0 orders').waitFor();
    expect(await page.getByLabel('Client').inputValue()).toBe('alpha');
    expect(await gone.count()).toBe(0);
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });
});

describe.skipIf(!hasChromium)('/dashboard for an admin of clients whose ids are beyond Latin-1', () => {
  const ADMIN = 'wide-admin-token';
  let sandbox: Sandbox;
  let browser: Browser;
  let page: Page;
  let pageErrors: string[];

  beforeAll(async () => {
    sandbox = await createSandbox({ clock: 'manual', port: 0, clients: [{ token: 'sato-token', id: '佐藤' }, { token: 'muller-token', id: 'Müller GmbH' }], adminTokens: [ADMIN] });
    ({ browser, page, pageErrors } = await openPage());
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
  });

  it('acts for each (fetch takes no header beyond Latin-1: the id goes as UTF-8 bytes)', async () => {
    await signIn(page, sandbox.url, ADMIN);
    for (const id of ['佐藤', 'Müller GmbH']) {
      await page.getByLabel('Client').selectOption(id);
      await page.getByText('0 orders').waitFor();
      expect(await page.getByLabel('Client').inputValue()).toBe(id);
      expect(await page.getByRole('alert').count()).toBe(0);
    }
    expect(pageErrors).toEqual([]);
  });
});

describe.skipIf(!hasChromium)('/dashboard as a user trial found it', () => {
  const TOKEN = 'trial-token-a';
  const OTHER = 'trial-token-b';
  let sandbox: Sandbox;
  let browser: Browser;
  let page: Page;
  let pageErrors: string[];
  const post = (path: string, body: unknown, token = TOKEN) =>
    fetch(`${sandbox.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  /** How wide the page is beyond the window, and how tall in screen heights. */
  const extent = () => page.evaluate(() => ({ overflow: document.documentElement.scrollWidth - innerWidth, screens: document.documentElement.scrollHeight / innerHeight }));

  beforeAll(async () => {
    sandbox = await createSandbox({ clock: 'manual', port: 0, clients: [{ token: TOKEN, id: 'trial-a' }, { token: OTHER, id: 'trial-b' }] });
    ({ browser, page, pageErrors } = await openPage());
    await signIn(page, sandbox.url, TOKEN);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
  });

  it('says Send test has no URL, and drops that error once Save URL is refused by the browser', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    // The endpoint's state says there is no URL in words, not as a source named "none".
    await page.getByText('no URL set').waitFor();
    expect(await page.getByText('URL from none').count()).toBe(0);
    await page.getByRole('button', { name: 'Send test' }).click();
    await page.getByRole('alert').filter({ hasText: '409' }).waitFor();
    await page.getByLabel('Endpoint URL').fill('not a url');
    await page.getByRole('button', { name: 'Save URL' }).click();
    await page.waitForTimeout(200);
    expect(await page.getByRole('alert').count()).toBe(0);
  });

  it('saves a pasted URL with a space after it as the URL', async () => {
    const url = `${sandbox.url}/trial-hook`;
    await page.getByLabel('Endpoint URL').fill(`${url}\u00a0`);
    await page.getByRole('button', { name: 'Save URL' }).click();
    await page.getByRole('status').filter({ hasText: `Webhooks go to ${url} (` }).waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
  });

  it('refuses an advance beyond a year in minutes, and echoes the number it sent', async () => {
    await page.getByRole('link', { name: 'Clock' }).click();
    for (const typed of ['99999999999', '525601']) {
      await page.getByLabel('Advance by').fill(typed);
      await page.getByRole('button', { name: 'Advance', exact: true }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      expect(await alert.innerText()).toBe('Give how many minutes to advance by (a number from 0 to 525600, a year): nothing was sent.');
    }
    await page.getByLabel('Advance by').fill('1e3');
    await page.getByRole('button', { name: 'Advance', exact: true }).click();
    await page.getByRole('status').filter({ hasText: /^Advanced 1000 minutes: / }).waitFor();
    // A part of the unit is taken (1.5 minutes is 90 s), as it was before the year's bound.
    await page.getByLabel('Advance by').fill('1.5');
    await page.getByRole('button', { name: 'Advance', exact: true }).click();
    await page.getByRole('status').filter({ hasText: /^Advanced 1.5 minutes: / }).waitFor();
  });

  it('folds the spec violations of each request: a page of 30 rejected creates stays under three screen heights', async () => {
    for (let i = 0; i < 30; i++) expect((await post('/v1/order', { items: [{ item_weight: 'heavy' }] })).status).toBe(400);
    await page.getByRole('link', { name: 'Requests' }).click();
    const rejected = page.locator('.journal > li.violation');
    await rejected.nth(19).waitFor();
    const summary = await rejected.first().locator('summary').first().innerText();
    expect(summary).toMatch(/^\d+ spec violations$/);
    expect(Number.parseInt(summary, 10)).toBeGreaterThan(10);
    expect(await rejected.first().getByText('items[0].item_weight').isVisible()).toBe(false);
    const e = await extent();
    expect(e.screens).toBeLessThan(3);
    expect(e.overflow).toBeLessThanOrEqual(0);
    await rejected.first().locator('summary').first().click();
    expect(await rejected.first().getByText('items[0].item_weight', { exact: true }).isVisible()).toBe(true);
  });

  it('fits the orders table in the window with 50-character order codes, Created whole', async () => {
    const code = 'X'.repeat(50);
    const created = await post('/v1/order', createRequest(1, { items: [item({ order_code: code })] }));
    expect(created.status).toBe(201);
    await page.getByRole('link', { name: 'Orders', exact: true }).click();
    await page.getByText(code).waitFor();
    expect((await extent()).overflow).toBeLessThanOrEqual(0);
    const fits = await page.evaluate(() => {
      const wrapper = document.querySelector('.scroll')!;
      return wrapper.scrollWidth <= wrapper.clientWidth;
    });
    expect(fits).toBe(true);
    expect(await page.locator('table.orders tbody td').last().innerText()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/);
  });

  it('keeps a right-to-left override in a partner field from reordering the text after it', async () => {
    const created = await post('/v1/order', createRequest(1, { items: [item({ order_code: 'BIDI-1', item_name: 'a\u202Eevil' })] }));
    const orderNo = ((await created.json()) as { order_numbers: string[] }).order_numbers[0]!;
    await page.goto(`${sandbox.url}/dashboard#/orders/${orderNo}`);
    const dd = page.locator('.details dd', { hasText: 'evil' });
    await dd.waitFor();
    // Where the browser draws the name's last letter and the "×" after it.
    const xs = await dd.evaluate((el) => {
      const text = el.querySelector('bdi')?.firstChild ?? el.firstChild!;
      const at = (node: Node, i: number) => {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        return range.getBoundingClientRect();
      };
      const after = [...el.childNodes].find((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.includes('×'))!;
      const name = [...Array(text.textContent!.length).keys()].map((i) => at(text, i).right);
      return { nameRight: Math.max(...name), times: at(after, after.textContent!.indexOf('×')).left };
    });
    expect(xs.times).toBeGreaterThanOrEqual(xs.nameRight - 0.5);
  });

  it("signs out to the orders list: the next client does not land on the last one's order", async () => {
    expect(page.url()).toContain('#/orders/');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Token').fill(OTHER);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Orders', level: 1 }).waitFor();
    await page.getByText('0 orders').waitFor();
    expect(new URL(page.url()).hash).toBe('#/orders');
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });
});
