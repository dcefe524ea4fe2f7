import { createServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultName, runListen } from '../../src/client/listen.js';
import { backoffMs, forwardLine, heldNote, listenUrl, QuickestTrip, type ListenTuning } from '../../src/client/listen-session.js';
import { forward } from '../../src/client/forward.js';
import { BAD_RESPONSE, oneLineError } from '../../src/shared/index.js';
import { sandboxUrl } from '../../src/client/url.js';
import { Receiver, downPort } from '../webhooks/receiver.js';
import { ListenServer, until } from './listen-server.js';

const TOKEN = 'listen-token';
/** The CLI's own bounds, with a reconnect wait short enough for a test. */
const FAST: ListenTuning = { concurrency: 16, backoffMs: () => 50, silenceMs: 45_000 };

let sandbox: ListenServer;
let receiver: Receiver;
const running: Array<{ stop(): Promise<number> }> = [];

beforeEach(async () => {
  sandbox = await ListenServer.start();
  receiver = await Receiver.start();
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((l) => l.stop()));
  await sandbox.close();
  await receiver.close();
});

/** `shipping-sandbox listen` in this process, stopped (as by Ctrl-C) by stop(). */
function listen(args: string[] = [], tuning: ListenTuning = FAST) {
  const stop = new AbortController();
  let stdout = '';
  let stderr = '';
  const argv = ['--url', sandbox.url, '--token', TOKEN, '--forward-to', receiver.url, '--name', 'dev-laptop', ...args];
  const done = runListen(argv, (t) => void (stdout += t), (t) => void (stderr += t), {}, stop.signal, tuning);
  const listener = {
    done,
    stop: () => {
      stop.abort();
      return done;
    },
    stdout: () => stdout,
    stderr: () => stderr,
  };
  running.push(listener);
  return listener;
}

/** An attempt as the sandbox sends it: a body signed with the listener's secret, the headers a direct delivery has. */
function attempt(id: string, fields: Record<string, unknown> = {}) {
  const deliveryId = `msg_${id}`;
  const at = new Date();
  const body = JSON.stringify({ event: 'awb.generated', order_no: 'SBXORD0001', awb: 'SBXAWB0001', note: 'naïve “quotes” ✓' });
  return {
    type: 'attempt',
    id,
    delivery_id: deliveryId,
    event: 'awb.generated',
    order_no: 'SBXORD0001',
    timeout_ms: 5000,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'shipping-sandbox-webhooks/1',
      'webhook-id': deliveryId,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(sandbox.secret).sign(deliveryId, at, body),
    },
    body,
    ...fields,
  };
}

describe('shipping-sandbox listen: the opening', () => {
  it('sends the token in the Authorization header (never the URL), the name and the event filter, and prints the ready line with the secret', async () => {
    const listener = listen(['--events', 'awb.generated,order.cancelled', '--client', 'partner-a']);
    await until(() => listener.stdout().includes('Ready:'));
    const [opening] = sandbox.openings;
    expect(opening!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(opening!.headers['x-sandbox-client']).toBe('partner-a');
    expect(opening!.url.pathname).toBe('/__sandbox/listen');
    expect(Object.fromEntries(opening!.url.searchParams)).toEqual({ name: 'dev-laptop', events: 'awb.generated,order.cancelled', session: expect.stringMatching(/^[\w-]{1,64}$/) });
    expect(opening!.url.toString()).not.toContain(TOKEN);
    expect(listener.stdout()).toBe(`Ready: listener "dev-laptop" (endpoint ep_test1) forwarding to ${receiver.url}. Signing secret: ${sandbox.secret} (0 held deliveries coming; events: awb.generated,order.cancelled)\n`);
  });

  it('takes --events given twice as one list (both filters kept), sent once', async () => {
    const listener = listen(['--events', 'awb.generated', '--events', 'order.cancelled,awb.generated']);
    await until(() => listener.stdout().includes('Ready:'));
    expect(sandbox.openings[0]!.url.searchParams.getAll('events')).toEqual(['awb.generated,order.cancelled']);
  });

  it('sends no events parameter without --events, and no x-sandbox-client without --client', async () => {
    const listener = listen();
    await until(() => listener.stdout().includes('Ready:'));
    expect([...sandbox.openings[0]!.url.searchParams.keys()]).toEqual(['name', 'session']);
    expect(listener.stdout()).toMatch(/; events: all\)\n$/);
    expect(sandbox.openings[0]!.headers).not.toHaveProperty('x-sandbox-client');
  });

  it('turns http into ws and https into wss, keeping the token out of the URL', () => {
    expect(listenUrl('http://127.0.0.1:4010', 'me@host', ['awb.generated'])).toBe('ws://127.0.0.1:4010/__sandbox/listen?name=me@host&events=awb.generated');
    expect(listenUrl('https://sandbox.example', 'ci')).toBe('wss://sandbox.example/__sandbox/listen?name=ci');
  });

  it("keeps the path of a sandbox behind a gateway's prefix, as every command does", () => {
    expect(listenUrl('https://gw.example/sandbox/', 'ci')).toBe('wss://gw.example/sandbox/__sandbox/listen?name=ci');
    expect(sandboxUrl('https://gw.example/sandbox', '/__sandbox/report?format=junit').href).toBe('https://gw.example/sandbox/__sandbox/report?format=junit');
    expect(sandboxUrl('http://127.0.0.1:4010', '/__sandbox/webhooks/recover').href).toBe('http://127.0.0.1:4010/__sandbox/webhooks/recover');
    expect(sandboxUrl('http://127.0.0.1:4010/?x=1', '/__sandbox/events/trigger').href).toBe('http://127.0.0.1:4010/__sandbox/events/trigger');
    // A doubled slash stays a path on the same host: the token never goes to a host the path names.
    expect(sandboxUrl('http://127.0.0.1:9//evil.example:4010/', '/__sandbox/report?format=json').href).toBe('http://127.0.0.1:9//evil.example:4010/__sandbox/report?format=json');
    expect(listenUrl('https://gw.example//evil.example/', 'ci')).toBe('wss://gw.example//evil.example/__sandbox/listen?name=ci');
  });
});

describe('shipping-sandbox listen: forwarding an attempt', () => {
  it('POSTs the exact body and headers to --forward-to and answers the status, duration, excerpt and Retry-After', async () => {
    receiver.respond = () => ({ status: 202, headers: { 'retry-after': '120' }, body: 'é'.repeat(700) });
    const listener = listen();
    await until(() => sandbox.sockets.length === 1);
    const sent = attempt('a1');
    sandbox.send(sent);
    const result = await sandbox.result('a1');
    const [got] = receiver.received;
    expect(got!.body).toBe(sent.body);
    for (const [name, value] of Object.entries(sent.headers)) expect(got!.headers[name]).toBe(value);
    expect(new Webhook(sandbox.secret).verify(got!.body, got!.headers as Record<string, string>)).toMatchObject({ order_no: 'SBXORD0001' });
    // 1024 bytes of two-byte characters: 512 of them, none cut in two.
    expect(result).toEqual({ type: 'result', id: 'a1', status_code: 202, duration_ms: expect.any(Number), error: null, response_body: 'é'.repeat(512), retry_after: '120' });
    expect(listener.stdout()).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z {2}awb\.generated {2}SBXORD0001 {2}→ 202 {2}\d+ ms$/m);
  });

  it('does not follow a redirect: the 3xx is the answer', async () => {
    receiver.respond = () => ({ status: 307, headers: { location: 'http://127.0.0.1:9/elsewhere' } });
    listen();
    await until(() => sandbox.sockets.length === 1);
    sandbox.send(attempt('r1'));
    expect(await sandbox.result('r1')).toMatchObject({ status_code: 307, error: null });
    expect(receiver.received).toHaveLength(1);
  });

  it('answers status null and the connection error when the local receiver is down', async () => {
    const listener = listen(['--forward-to', `http://127.0.0.1:${await downPort()}/hooks`]);
    await until(() => sandbox.sockets.length === 1);
    sandbox.send(attempt('d1'));
    expect(await sandbox.result('d1')).toMatchObject({ status_code: null, error: expect.stringMatching(/^ECONNREFUSED: /), response_body: '', retry_after: null });
    expect(listener.stdout()).toMatch(/awb\.generated {2}SBXORD0001 {2}→ ECONNREFUSED: .* \d+ ms$/m);
  });

  it('answers "timed out" within the attempt’s timeout_ms when the local receiver is silent', async () => {
    receiver.respond = () => ({ status: 200, hang: true });
    const listener = listen();
    await until(() => sandbox.sockets.length === 1);
    const started = Date.now();
    sandbox.send(attempt('t1', { timeout_ms: 300 }));
    expect(await sandbox.result('t1')).toMatchObject({ status_code: null, error: 'timed out after 300 ms' });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(listener.stdout()).toContain('→ timed out after 300 ms');
  });

  it('forwards at most `concurrency` attempts at once and queues the rest in order', async () => {
    receiver.respond = () => ({ status: 200, delayMs: 1000 });
    listen([], { ...FAST, concurrency: 3 });
    await until(() => sandbox.sockets.length === 1);
    for (let i = 0; i < 8; i += 1) sandbox.send(attempt(`c${i}`, { timeout_ms: 5000 }));
    await until(() => receiver.received.length === 3);
    // Well within the first three's answers (a second): no fourth is forwarded before a slot is free.
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(receiver.received).toHaveLength(3);
    // Each slot freed by an answer takes the next attempt: every one is forwarded and answered.
    // (Forwards begin in order; three under way may reach the receiver in any order.)
    await until(() => sandbox.messages.length === 8, 10_000);
    const ids = receiver.received.map((r) => r.id);
    expect(ids.slice(0, 3).sort()).toEqual(['msg_c0', 'msg_c1', 'msg_c2']);
    expect([...ids].sort()).toEqual([...Array(8).keys()].map((i) => `msg_c${i}`));
    expect(sandbox.messages.every((m) => m.status_code === 200)).toBe(true);
  });

  it('gives a queued attempt only what is left of its timeout_ms since it arrived, and answers one whose time ran out in the queue at once, unforwarded', async () => {
    receiver.respond = () => ({ status: 200, hang: true });
    const listener = listen([], { ...FAST, concurrency: 1 });
    await until(() => sandbox.sockets.length === 1);
    const started = Date.now();
    // q1 holds the only slot for 1 s; q2's 800 ms run out meanwhile; q3 has 800 ms of its 1,800 left. (Wide enough
    // apart that timers late on a busy machine do not blur what is left from a whole timeout.)
    sandbox.send(attempt('q1', { timeout_ms: 1_000 }));
    sandbox.send(attempt('q2', { timeout_ms: 800 }));
    sandbox.send(attempt('q3', { timeout_ms: 1_800 }));
    const q2 = await sandbox.result('q2');
    expect(q2).toMatchObject({ status_code: null, duration_ms: 0, error: expect.stringMatching(/^not forwarded: waited \d+ ms in the listener's queue$/) });
    expect(Number(/waited (\d+) ms/.exec(String(q2.error))![1])).toBeGreaterThanOrEqual(800);
    const q3 = await sandbox.result('q3');
    expect(q3).toMatchObject({ status_code: null, error: expect.stringMatching(/^timed out after \d+ ms \(the rest of its timeout after \d+ ms in the listener's queue\)$/) });
    // Its forward had what was left of its own 1,800 ms after its wait in the queue (behind q1's 1,000), not 1,800 more.
    const [, forwardMs, queuedMs] = /^timed out after (\d+) ms \(the rest of its timeout after (\d+) ms/.exec(String(q3.error))!.map(Number);
    expect(queuedMs).toBeGreaterThanOrEqual(800);
    expect(forwardMs! + queuedMs!).toBeLessThanOrEqual(2_300);
    // Measured, not only said: its forward lasted about the 800 ms left, not its whole 1,800.
    expect(q3.duration_ms).toBeLessThan(1_500);
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(receiver.received.map((r) => r.id)).toEqual(['msg_q1', 'msg_q3']);
    expect(listener.stdout()).toContain('→ not forwarded: waited');
  });

  it('answers an attempt it read after its time ran out (the process paused, the machine asleep) at once, unforwarded, and gives one read late only what is left', async () => {
    receiver.respond = () => ({ status: 200, hang: true });
    listen();
    await until(() => sandbox.sockets.length === 1);
    // As read after a pause: the sandbox sent them 6 s and 4.7 s ago, of 5 s each.
    sandbox.send(attempt('gone', { sent_at: Date.now() - 6_000 }));
    sandbox.send(attempt('short', { sent_at: Date.now() - 4_700 }));
    expect(await sandbox.result('gone')).toMatchObject({ status_code: null, duration_ms: 0, error: expect.stringMatching(/^not forwarded: read \d+ ms after the sandbox sent it \(was this process paused, or its machine asleep\?\), then \d+ ms in the listener's queue$/) });
    const started = Date.now();
    expect(await sandbox.result('short')).toMatchObject({ status_code: null, error: expect.stringMatching(/^timed out after \d+ ms/) });
    // The receiver had the 300 ms left of its 5 s, not 5 s of its own.
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(receiver.received.map((r) => r.id)).toEqual(['msg_short']);
  });

  it('tells how late a message was read from the quickest trip of the last minute, and gets over a step of the wall clock within it', () => {
    const trips = new QuickestTrip();
    // Pings every 15 s, each read 5 to 9 ms after it was sent (the clocks 2 s apart).
    for (let sent = 0; sent <= 45_000; sent += 15_000) trips.lateBy(sent, sent + 2_000 + 5 + (sent % 4));
    // An attempt read 12 s late (the process paused): late by its 12 s.
    expect(trips.lateBy(50_000, 50_000 + 2_000 + 12_005)).toBe(12_000);
    // The listener's clock steps 15 s forward: late at first, then the window forgets the old trips.
    const late = [];
    for (let sent = 60_000; sent <= 180_000; sent += 15_000) late.push(trips.lateBy(sent, sent + 17_000 + 5));
    expect(late[0]).toBe(15_000);
    expect(late.at(-1)).toBe(0);
    // The sandbox's clock steps 5 minutes back: forgotten within the minute too, not after the 5 minutes.
    const back = [];
    for (let read = 200_000; read <= 290_000; read += 15_000) back.push(trips.lateBy(read - 17_005 - 300_000, read));
    expect(back[0]).toBe(300_000);
    expect(back.at(-1)).toBe(0);
  });

  it('on a stop, answers the forward under way before closing, and forwards nothing new (so the receiver never sees a webhook twice)', async () => {
    receiver.respond = () => ({ status: 200, body: 'ok', delayMs: 400 });
    const listener = listen();
    await until(() => listener.stdout().includes('Ready:'));
    sandbox.send(attempt('under-way'));
    await until(() => receiver.received.length === 1);
    const stopped = listener.stop();
    sandbox.send(attempt('too-late'));
    expect(await sandbox.result('too-late')).toMatchObject({ status_code: null, error: 'not forwarded: the listener is stopping' });
    expect(await sandbox.result('under-way')).toMatchObject({ status_code: 200 });
    expect(await stopped).toBe(0);
    expect(sandbox.closes).toEqual([1000]);
    expect(receiver.received).toHaveLength(1);
    expect(listener.stderr()).toMatch(/stopping once the 1 forward\(s\) under way are answered/);
  });

  it('ignores message types it does not know, and answers an attempt it cannot read as failed', async () => {
    listen();
    await until(() => sandbox.sockets.length === 1);
    sandbox.send({ type: 'stats', whatever: 1 });
    sandbox.send({ type: 'attempt', id: 'bad1', body: 42 });
    sandbox.send(attempt('ok1'));
    expect(await sandbox.result('bad1')).toMatchObject({ status_code: null, error: expect.stringContaining('could not read this attempt') });
    expect(await sandbox.result('ok1')).toMatchObject({ status_code: 200 });
    expect(receiver.received).toHaveLength(1);
  });
});

describe('shipping-sandbox listen: its lines', () => {
  it("names a chaos copy on the forward's line, so a 400 to the forged one reads as the receiver refusing it", () => {
    const attempt = { type: 'attempt' as const, id: 'a1', delivery_id: 'msg_1', event: 'awb.generated', order_no: '512345678901', timeout_ms: 10_000, headers: {}, body: '{}' };
    const result = { type: 'result' as const, id: 'a1', status_code: 400, duration_ms: 3, error: null, response_body: '', retry_after: null };
    const at = new Date('2026-12-01T08:00:00Z');
    expect(forwardLine({ ...attempt, chaos: 'bad_signature' }, result, at)).toBe('2026-12-01T08:00:00.000Z  awb.generated (forged signature)  512345678901  → 400  3 ms\n');
    expect(forwardLine(attempt, { ...result, status_code: 204 }, at)).toBe('2026-12-01T08:00:00.000Z  awb.generated  512345678901  → 204  3 ms\n');
  });
});

describe('shipping-sandbox listen: a failed forward on its line', () => {
  const one = { type: 'attempt' as const, id: 'a1', delivery_id: 'msg_1', event: 'awb.generated', order_no: '512345678901', timeout_ms: 10_000, headers: { 'content-type': 'application/json' }, body: '{}' };

  it('says an https:// URL to a plain-http receiver in one line, with the reason OpenSSL gives and what it likely means', async () => {
    const plain = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    try {
      const result = await forward(one, `https://127.0.0.1:${(plain.address() as AddressInfo).port}/hooks`);
      expect(result.error).toBe('ERR_SSL_WRONG_VERSION_NUMBER: wrong version number (an https:// URL to a receiver that speaks plain http?)');
      expect(forwardLine(one, result, new Date('2026-12-01T08:00:00Z'))).toMatch(/^[^\n]*\n$/);
    } finally {
      plain.close();
    }
  });

  it.each([
    ['answers what is not HTTP', 'hello\r\n\r\n', 'Response does not match the HTTP/1.1 protocol'],
    ['answers a 100 Continue first', 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok', `UND_ERR_SOCKET: bad response (${BAD_RESPONSE})`],
  ])('says why, as a direct attempt does, of a receiver that %s', async (_what, answer, error) => {
    const raw = createNetServer((socket) => socket.once('data', () => socket.end(answer)));
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    try {
      const result = await forward(one, `http://127.0.0.1:${(raw.address() as AddressInfo).port}/hooks`);
      expect(result).toMatchObject({ status_code: null, error: expect.stringContaining(error) });
    } finally {
      raw.close();
    }
  });

  it('names no queue for a wait of a millisecond or two, and gives the whole timeout it ran for', async () => {
    receiver.respond = () => ({ status: 200, hang: true });
    expect((await forward({ ...one, timeout_ms: 300 }, receiver.url, 299, 1)).error).toBe('timed out after 300 ms');
    expect((await forward({ ...one, timeout_ms: 600 }, receiver.url, 300, 300)).error).toBe("timed out after 300 ms (the rest of its timeout after 300 ms in the listener's queue)");
  });

  it.each([
    [0, '0 held deliveries coming'],
    [1, '1 held delivery coming'],
    [3, '3 held deliveries coming'],
  ])('counts %d held deliveries on the ready line as %j', (held, note) => {
    expect(heldNote(held)).toBe(note);
  });
});

describe('oneLineError', () => {
  it.each([
    ['ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:3000', 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:3000'],
    ['ERR_SSL_PACKET_LENGTH_TOO_LONG', '40BDAB96:error:0A0000C6:SSL routines:tls_get_more_records:packet length too long:../deps/openssl/openssl/ssl/record/methods/tls_common.c:662:\n', 'ERR_SSL_PACKET_LENGTH_TOO_LONG: packet length too long'],
    ['UND_ERR_SOCKET', 'other side closed\r\n  twice', 'UND_ERR_SOCKET: other side closed twice'],
    ['ECONNRESET', undefined, 'ECONNRESET'],
    ['ERR_SSL_WRONG_VERSION_NUMBER', '80DC0B1C:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/openssl/ssl/record/ssl3_record.c:350:\n', 'ERR_SSL_WRONG_VERSION_NUMBER: wrong version number (an https:// URL to a receiver that speaks plain http?)'],
    ['ERR_SSL_WRONG_VERSION_NUMBER', undefined, 'ERR_SSL_WRONG_VERSION_NUMBER (an https:// URL to a receiver that speaks plain http?)'],
    ['EPROTO', 'write EPROTO 405DF32B297F0000:error:0A00010B:SSL routines:tls_validate_record_header:wrong version number:../deps/openssl/openssl/ssl/record/methods/tlsany_meth.c:77:\n', 'EPROTO: wrong version number (an https:// URL to a receiver that speaks plain http?)'],
  ])('%s', (code, message, line) => {
    expect(oneLineError(code, message)).toBe(line);
  });
});

describe('shipping-sandbox listen: reconnecting', () => {
  it('says on stderr when the signing secret changed across a reconnect (a sandbox that lost its data made the endpoint again), and not when it did not', async () => {
    const listener = listen();
    await until(() => listener.stdout().includes('Ready:'));
    sandbox.socket.close(1001, 'shutting down');
    await until(() => listener.stdout().split('Ready:').length === 3);
    expect(listener.stderr()).not.toMatch(/secret changed/);
    sandbox.secret = 'whsec_bmV3LXNlY3JldC1hZnRlci1hLXJlc3RhcnQ=';
    sandbox.socket.close(1001, 'shutting down');
    await until(() => listener.stdout().split('Ready:').length === 4);
    expect(listener.stderr()).toContain('shipping-sandbox listen: the signing secret changed since the last connection (rotated, or the endpoint made again by a sandbox that lost its data): verify with whsec_bmV3LXNlY3JldC1hZnRlci1hLXJlc3RhcnQ= from now on\n');
  });

  it('says on stderr, once, when an attempt carries a secret other than the one printed (rotated while connected), and not when it carries the same', async () => {
    const listener = listen();
    await until(() => listener.stdout().includes('Ready:'));
    sandbox.send(attempt('s1', { secret: sandbox.secret }));
    await sandbox.result('s1');
    expect(listener.stderr()).not.toMatch(/secret changed/);
    const rotated = 'whsec_cm90YXRlZC13aGlsZS1jb25uZWN0ZWQ=';
    sandbox.send(attempt('s2', { secret: rotated }));
    sandbox.send(attempt('s3', { secret: rotated }));
    await sandbox.result('s3');
    expect(listener.stderr()).toBe(`shipping-sandbox listen: the signing secret changed while connected (rotated): verify with ${rotated} from now on\n`);
  });

  it('says it could not connect, not that a connection was lost, while nothing listens at --url yet', async () => {
    const listener = listen(['--url', `http://127.0.0.1:${await downPort()}`]);
    await until(() => /reconnecting in/.test(listener.stderr()));
    expect(listener.stderr()).toMatch(/could not connect \(connect ECONNREFUSED 127\.0\.0\.1:\d+\); reconnecting in 0\.1 s \(try 1\)/);
    expect(listener.stderr()).not.toContain('connection lost');
  });

  it.each([
    ['a dropped connection', () => sandbox.socket.terminate()],
    ['the sandbox shutting down (1001)', () => sandbox.socket.close(1001, 'shutting down')],
    ['a reset of the client (4004: its endpoint is made anew)', () => sandbox.socket.close(4004, 'the client was reset: connect again to make the listener endpoint anew')],
  ])('opens a second connection after %s, saying so, and prints the ready line again', async (_, drop) => {
    const listener = listen();
    await until(() => listener.stdout().includes('Ready:'));
    drop();
    await until(() => sandbox.openings.length === 2 && listener.stdout().split('Ready:').length === 3);
    expect(listener.stderr()).toMatch(/reconnecting in 0\.1 s \(try 1\)/);
    expect(sandbox.openings[1]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    // The same process, back: a newer listen that took the name meanwhile would keep it (the sandbox answers 409).
    expect(sandbox.openings[0]!.url.searchParams.get('resume')).toBeNull();
    expect(sandbox.openings[1]!.url.searchParams.get('resume')).toBe('1');
    expect(sandbox.openings[1]!.url.searchParams.get('session')).toBe(sandbox.openings[0]!.url.searchParams.get('session'));
    // Still forwarding on the new connection.
    sandbox.send(attempt('after'));
    expect(await sandbox.result('after')).toMatchObject({ status_code: 200 });
  });

  it.each([
    [4001, 'replaced by a newer connection under this name'],
    [4002, 'listener endpoint removed'],
    [4003, 'listener endpoint disabled (a 410 Gone, or the API): fix the receiver, then start listen again'],
  ])('ends for good, exit 1, when the sandbox closes with %i', async (code, reason) => {
    const listener = listen();
    await until(() => listener.stdout().includes('Ready:'));
    sandbox.socket.close(code, reason);
    expect(await listener.done).toBe(1);
    expect(listener.stderr()).toContain(`the sandbox closed the connection (${code}): ${reason}`);
    expect(sandbox.openings).toHaveLength(1);
  });

  it('tries again after a 429 (--rate-limit) rather than giving up', async () => {
    sandbox.refuse = { status: 429, body: { success: false, message: 'This client sent more than 3 requests in a second', errors: [] } };
    const listener = listen();
    await until(() => sandbox.openings.length === 2);
    sandbox.refuse = undefined;
    await until(() => listener.stdout().includes('Ready:'));
    expect(listener.stderr()).toMatch(/the sandbox answered 429: This client sent more than 3 requests in a second; reconnecting in 0\.1 s \(try \d\)/);
  });

  it('exits 2 at once, asking whether it is a sandbox, when --url answers with a page no sandbox gives (another service, a gateway root)', async () => {
    const other = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      let stderr = '';
      const code = await runListen(['--url', url, '--token', TOKEN, '--forward-to', receiver.url, '--name', 'dev-laptop'], () => undefined, (t) => void (stderr += t), {}, new AbortController().signal, FAST);
      expect(code).toBe(2);
      expect(stderr).toBe(`shipping-sandbox listen: ${url} answered 200 with "ok": is it a shipping sandbox?\n`);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('once it has been ready, keeps reconnecting through a page no sandbox gives (a gateway\'s maintenance page while the sandbox restarts)', async () => {
    const listener = listen();
    await until(() => listener.stdout().includes('Ready:'));
    sandbox.refuse = { status: 200, body: '<html>Down for maintenance</html>' };
    sandbox.socket.terminate();
    await until(() => sandbox.openings.length >= 3);
    sandbox.refuse = undefined;
    await until(() => listener.stdout().split('Ready:').length === 3);
    expect(listener.stderr()).toMatch(/the sandbox answered 200: "<html>Down for maintenance<\/html>"; reconnecting/);
    expect(listener.stderr()).not.toMatch(/is it a shipping sandbox/);
  });

  it('waits 1, 2, 4, … 30 s between tries, plus up to a quarter more', () => {
    for (const [n, base] of [[1, 1000], [2, 2000], [3, 4000], [5, 16_000], [6, 30_000], [40, 30_000]] as const) {
      const wait = backoffMs(n);
      expect(wait).toBeGreaterThanOrEqual(base);
      expect(wait).toBeLessThanOrEqual(base * 1.25);
    }
  });
});

describe('shipping-sandbox listen: usage errors (test/e2e/listen-exits.test.ts runs the real CLI for the exit codes)', () => {
  it.each([
    [['--url', 'URL', '--token', TOKEN], /required option '--forward-to <url>'/],
    [['--forward-to', 'RECEIVER', '--token', TOKEN], /required option '--url <url>'/],
    [['--url', 'ftp://sandbox.example', '--forward-to', 'RECEIVER', '--token', TOKEN], /'--url <url>'.*must be an http:\/\/ or https:\/\/ URL, not ftp:/],
    [['--url', 'URL', '--forward-to', 'localhost:3000/hooks', '--token', TOKEN], /'--forward-to <url>'.*must be an absolute http:\/\/ or https:\/\/ URL, e\.g\. http:\/\/localhost:3000\/hooks/],
    [['--url', 'URL', '--forward-to', 'http://user:secret@127.0.0.1:3000/hooks', '--token', TOKEN], /'--forward-to <url>'.*must not hold a user or password/],
    [['--url', 'URL', '--forward-to', '/hooks', '--token', TOKEN], /'--forward-to <url>'.*must be an absolute http:\/\/ or https:\/\/ URL, e\.g\. http:\/\/localhost:3000\/hooks/],
    [['--url', 'nonsense', '--forward-to', 'RECEIVER', '--token', TOKEN], /'--url <url>'.*must be an absolute http:\/\/ or https:\/\/ URL, e\.g\. https:\/\/sandbox\.example/],
    [['--url', 'URL', '--forward-to', 'RECEIVER', '--token', TOKEN, '--events', 'awb.generated,,order.cancelled'], /'--events <list>' argument 'awb\.generated,,order\.cancelled' is invalid\. must not hold an empty event name \(a comma too many\): use one or more of awb\.generated, /],
    [['--url', 'URL', '--forward-to', 'RECEIVER', '--token', TOKEN, '--events', ','], /'--events <list>' argument ',' is invalid\. must not hold an empty event name/],
    [['--url', 'URL', '--forward-to', 'RECEIVER', '--token', TOKEN, '--events', ''], /^error: option '--events <list>' argument '' is invalid\. must name at least one event: use one or more of awb\.generated, awb\.failed, order\.cancelled, comma-separated\n$/],
    [['--url', 'URL', '--forward-to', 'RECEIVER', '--token', TOKEN, '--events', ' '], /'--events <list>' argument ' ' is invalid\. must name at least one event: /],
    [['--url', 'URL', '--forward-to', 'RECEIVER', '--token', TOKEN, '--name', 'my laptop'], /'--name <name>'.*1 to 64 characters of A-Z a-z 0-9 \. _ @ -/],
    [['--url', 'URL', '--forward-to', 'RECEIVER', '--token', TOKEN, '--name', 'x'.repeat(65)], /'--name <name>'/],
    [['--url', 'URL', '--forward-to', 'RECEIVER'], /required option '--token <token>' not specified \(or set SANDBOX_TOKENS\)/],
    [['--url', 'URL', '--forward-to', 'RECEIVER', '--token', ''], /'--token <token>' argument '' is invalid\. must not be empty/],
    [['--url', 'URL', '--forward-to', 'RECEIVER', '--token', TOKEN, '--client', ''], /'--client <id>' argument '' is invalid\. must not be empty/],
    // A token is a secret: a refusal does not quote it.
    [['--url', 'URL', '--forward-to', 'RECEIVER', '--token', 'tok\r\nX-Injected: 1'], /^error: option '--token <token>' is invalid \(the value is not shown\)\. a token is visible text without spaces[^\n]*\n$/],
    [['--url', 'URL', '--forward-to', 'RECEIVER', '--token', 'tok€a'], /^error: option '--token <token>' is invalid \(the value is not shown\)\. a token is visible text without spaces, in characters of one byte[^\n]*\n$/],
    [['--url', 'URL', '--forward-to', 'RECEIVER', '--token', TOKEN, '--client', 'acme\u0000'], /'--client <id>' argument .* is invalid\. must not hold a line break or another control character/],
  ])('exits 2 naming the flag for %j, without connecting', async (args, message) => {
    let stderr = '';
    const argv = args.map((a) => (a === 'URL' ? sandbox.url : a === 'RECEIVER' ? receiver.url : a));
    const code = await runListen(argv, () => {}, (t) => void (stderr += t), {}, new AbortController().signal);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(sandbox.openings).toHaveLength(0);
  });

  it('takes the token from SANDBOX_TOKENS when --token is not given, and names the listener user@host of this machine without --name', async () => {
    const stop = new AbortController();
    let stdout = '';
    const done = runListen(['--url', sandbox.url, '--forward-to', receiver.url], (t) => void (stdout += t), () => {}, { SANDBOX_TOKENS: 'from-env' }, stop.signal, FAST);
    await until(() => stdout.includes('Ready:'));
    stop.abort();
    expect(await done).toBe(0);
    expect(sandbox.openings[0]!.headers.authorization).toBe('Bearer from-env');
    expect(sandbox.openings[0]!.url.searchParams.get('name')).toBe(defaultName());
    expect(defaultName()).toMatch(/^[A-Za-z0-9._-]+@[A-Za-z0-9._@-]+$/);
  });
});
