// npm run soak: a million orders in the embedded store.
//
// 1. Builds a data file of SOAK_ORDERS (default 1,000,000) delivered orders with the
//    store's own writer (journal commits of 1,000 orders, then a checkpoint), not over HTTP,
//    as the sandbox of this schema keeps them (records at version 1, due times already jobs).
// 2. Starts the built CLI on it and times the start (spawn to `listening on`).
// 3. Reads the settled RSS of the running sandbox (/proc/PID/status VmRSS, after it idles).
// 4. Checks through the control API that the client sees every order (total) and that a
//    sample of orders reads back as written.
// 5. Stops it with SIGTERM and times the shutdown.
// 6. Reopens the data file with the JournaledFile API and checks every order, field by field.
// Prints the figures; exits 1 when a check fails. Not part of npm test (it takes minutes).
import { spawn } from 'node:child_process';
import { isDeepStrictEqual } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clientIdOf } from '../src/clients/registry.js';
import type { Order } from '../src/records/order.js';
import { FILE_FORMATS } from '../src/store/embedded/order-file-format.js';
import { OrderPacker } from '../src/store/embedded/order-packer.js';
import { JournaledFile, type JournaledFileOptions } from '../src/store/embedded/file/index.js';

const ORDERS = Number(process.env.SOAK_ORDERS ?? 1_000_000);
const TOKEN = 'soak';
const CLIENT = clientIdOf(TOKEN);
const BASE_TIME = Date.UTC(2026, 0, 1);
const MiB = 2 ** 20;

/** Order number n as the sandbox would keep it: a delivered order of the default scenario. */
function order(n: number): Order {
  const orderNo = String(500000000000 + n);
  const created = BASE_TIME + n * 1_000;
  const awbAt = created + 3_000;
  return {
    order_no: orderNo,
    batch_id: `B${String(700000000 + Math.floor(n / 2))}`,
    client_id: CLIENT,
    courier_code: 'jne',
    scenario: 'delivered',
    status: 'delivered',
    sender: {
      sender_name: `Toko Sumber Rejeki ${n % 977}`,
      sender_addr_id: '3171',
      sender_address: `Jl. Jenderal Sudirman Kav. ${n % 90}, Karet Tengsin, Tanah Abang, Jakarta Pusat`,
      sender_phone: `0812${String(n).padStart(8, '0')}`,
      pickup_via: 'pickup',
      order_type: 'regular',
      input_type: 1,
    },
    item: {
      order_code: `INV-${n}`,
      receiver_name: `Budi Santoso ${n % 1013}`,
      receiver_phone: `0813${String(n).padStart(8, '0')}`,
      receiver_address: `Jl. Raya Darmo No. ${n % 300}, Wonokromo, Surabaya, Jawa Timur`,
      receiver_addr_id: '3578',
      service_code: '1',
      item_width: '20',
      item_height: '10',
      item_length: '30',
      item_value: String(150000 + (n % 1000) * 100),
      item_weight: '1200',
      item_qty: '1',
      item_name: 'Kemeja batik lengan panjang',
      item_category: 'fashion',
      insurance: '0',
      cod: '0',
    },
    awb: `JN${String(n).padStart(10, '0')}`,
    awb_due_at: null,
    awb_generated_at: awbAt,
    awb_error: null,
    journey_start: awbAt,
    next_step: null,
    history: Array.from({ length: 9 }, (_, step) => ({ step: 8 - step, at: awbAt + (8 - step) * 3_600_000 })),
    created_at: created,
    updated_at: awbAt + 8 * 3_600_000,
    cancelled_at: null,
    version: 1,
  } as Order;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const failures: string[] = [];
const check = (ok: boolean, what: string) => {
  if (!ok) failures.push(what);
  console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
};

/** The store as the sandbox opens it: orders packed as it keeps them, and written in its file format. */
function asTheSandbox(path: string): JournaledFileOptions {
  const packer = new OrderPacker();
  return { path, formats: FILE_FORMATS, pack: (collection, value, current) => (collection === 'orders' ? packer.pack(value, current) : value) };
}

async function build(data: string): Promise<void> {
  const started = Date.now();
  const store = await JournaledFile.open(asTheSandbox(data));
  // A file the sandbox itself wrote: the due times of its orders are jobs already (delivered orders have none).
  store.put('meta', 'jobs_migrated', BASE_TIME);
  store.put('meta', 'seed', 'soak');
  for (let n = 0; n < ORDERS; n += 1) {
    const o = order(n);
    store.put('orders', o.order_no, o);
    if (n % 1_000 === 999) {
      store.commit();
      await new Promise((r) => setImmediate(r)); // let background checkpoints run
    }
  }
  store.commit();
  await store.checkpoint();
  await store.close();
  console.log(`built ${ORDERS.toLocaleString('en')} orders in ${seconds(Date.now() - started)}: data file ${(statSync(data).size / MiB).toFixed(0)} MiB`);
}

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

async function runCli(data: string): Promise<void> {
  const started = Date.now();
  const child = spawn(process.execPath, ['dist/cli.js', '--port', '0', '--data', data, '--token', TOKEN, '--clock', 'manual', '--log-level', 'warn'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    void exited.then((code) => reject(new Error(`the CLI exited (${code}) before listening`)));
  });
  const startMs = Date.now() - started;
  console.log(`start-up on ${ORDERS.toLocaleString('en')} orders: ${seconds(startMs)}`);

  // Settled: RSS stops moving (10 s without a change of more than 1%), at most 60 s.
  let rss = rssMiB(child.pid!);
  for (let stable = 0, waited = 0; stable < 10 && waited < 60; waited += 1) {
    await new Promise((r) => setTimeout(r, 1_000));
    const now = rssMiB(child.pid!);
    stable = Math.abs(now - rss) < rss * 0.01 ? stable + 1 : 0;
    rss = now;
  }
  console.log(`settled RSS: ${rss.toFixed(0)} MiB`);

  const headers = { authorization: `Bearer ${TOKEN}` };
  const { total } = (await (await fetch(`${url}/__sandbox/orders?limit=1`, { headers })).json()) as { total: number };
  check(total === ORDERS, `the control API lists ${total.toLocaleString('en')} orders of the client`);
  let sampled = 0;
  for (let n = 0; n < ORDERS; n += Math.max(1, Math.floor(ORDERS / 1_000))) {
    const res = await fetch(`${url}/__sandbox/orders/${order(n).order_no}`, { headers });
    const body = (await res.json()) as { awb?: string; status?: string };
    if (res.status === 200 && body.awb === order(n).awb && body.status === 'delivered') sampled += 1;
    else failures.push(`order ${order(n).order_no}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
  }
  check(sampled > 0 && failures.length === 0, `${sampled} sampled orders read back through the control API`);

  const stopping = Date.now();
  child.kill('SIGTERM');
  const code = await exited;
  const stopMs = Date.now() - stopping;
  console.log(`shutdown (SIGTERM to exit): ${seconds(stopMs)}`);
  check(code === 0, `exit code ${code}`);
  check(stopMs < 5_000, 'shutdown within 5 s');
}

function verify(store: JournaledFile): void {
  let same = 0;
  for (let n = 0; n < ORDERS; n += 1) {
    const expected = order(n);
    // As JSON: the store keeps played steps packed (see PlayedSteps), which stand for the same entries.
    if (isDeepStrictEqual(JSON.parse(JSON.stringify(store.get('orders', expected.order_no))), expected)) same += 1;
  }
  check(same === ORDERS && store.count('orders') === ORDERS, `the JournaledFile API finds ${same.toLocaleString('en')} of ${ORDERS.toLocaleString('en')} orders exactly as written`);
}

const dir = mkdtempSync(join(tmpdir(), 'sandbox-soak-'));
const data = join(dir, 'sandbox.json');
try {
  await build(data);
  await runCli(data);
  const started = Date.now();
  const store = await JournaledFile.open(asTheSandbox(data));
  console.log(`JournaledFile.open of the file after the stop: ${seconds(Date.now() - started)}`);
  verify(store);
  await store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(failures.length === 0 ? 'soak: passed' : `soak: FAILED\n${failures.slice(0, 20).join('\n')}`);
process.exit(failures.length === 0 ? 0 : 1);
