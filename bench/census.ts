/**
 * npm run bench:census : what the heap holds per order created over HTTP, counted from a
 * V8 heap snapshot. Full collections mark every object the store keeps, so the objects
 * per order are what their marking work grows with (npm run bench:stalls shows that work).
 *
 * The sandbox as users run it (real clock, a data file, --awb-delay 1s, log level info
 * written to a file) takes BENCH_CENSUS_REQUESTS (5,000) 10-item creates on 10
 * connections, then waits until every order has its AWB (from its metrics; the held
 * awb.generated deliveries are part of an order's weight). It writes a heap snapshot on SIGUSR2 (node's
 * --heapsnapshot-signal; a snapshot holds live objects only) before the load and after:
 * the difference, per order, is printed by V8's kind of object, then the plain objects by
 * their first fields (an order, its item, its job, its delivery), with how many of them
 * keep fields in a separate property array. (A field holding a small integer is no edge
 * of the snapshot's graph: the first fields named are the first three holding anything else.)
 *
 * Run by `node --max-old-space-size=6144` (the snapshot of 50,000 orders is ~100 MB of JSON).
 */
import { readdirSync, readFileSync, rmSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { createRequest } from '../test/support/orders.js';
import { awbBacklog, HEADERS, scrape, spawnServer, stop, TMP } from './harness.js';
import { BENCH_TOKEN } from './prefill.js';

const REQUESTS = Number(process.env.BENCH_CENSUS_REQUESTS ?? 5_000);
const ITEMS = 10;

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

interface Tally {
  count: number;
  bytes: number;
  withPropertyArray: number;
}

const add = (tallies: Map<string, Tally>, key: string, bytes: number, withPropertyArray = false): void => {
  const tally = tallies.get(key) ?? { count: 0, bytes: 0, withPropertyArray: 0 };
  tally.count += 1;
  tally.bytes += bytes;
  if (withPropertyArray) tally.withPropertyArray += 1;
  tallies.set(key, tally);
};

/** `tallies` less what `base` counted (the sandbox before the load). */
function subtract(tallies: Map<string, Tally>, base: Map<string, Tally>): void {
  for (const [key, tally] of tallies) {
    const had = base.get(key);
    if (had === undefined) continue;
    tally.count -= had.count;
    tally.bytes -= had.bytes;
    tally.withPropertyArray -= had.withPropertyArray;
  }
}

/** Objects by V8's kind (its type, and the constructor for objects), and plain objects by their first three fields. */
function census(snapshot: Snapshot): { kinds: Map<string, Tally>; plain: Map<string, Tally> } {
  const { node_fields: nodeFields, node_types: nodeTypes, edge_fields: edgeFields, edge_types: edgeTypes } = snapshot.snapshot.meta;
  const [types] = nodeTypes;
  const [kindsOfEdge] = edgeTypes;
  const { nodes, edges, strings } = snapshot;
  const N = nodeFields.length;
  const E = edgeFields.length;
  const TYPE = nodeFields.indexOf('type');
  const NAME = nodeFields.indexOf('name');
  const SIZE = nodeFields.indexOf('self_size');
  const EDGES = nodeFields.indexOf('edge_count');
  const EDGE_TYPE = edgeFields.indexOf('type');
  const EDGE_NAME = edgeFields.indexOf('name_or_index');
  const TO = edgeFields.indexOf('to_node');
  const kinds = new Map<string, Tally>();
  const plain = new Map<string, Tally>();
  let edge = 0;
  for (let node = 0; node < nodes.length; node += N) {
    const type = types[nodes[node + TYPE]!]!;
    const name = strings[nodes[node + NAME]!]!;
    const bytes = nodes[node + SIZE]!;
    const edgeCount = nodes[node + EDGES]!;
    // Strings are named by their text, code by its function: only objects keep their name here.
    add(kinds, type === 'object' || type === 'hidden' ? `${type}: ${name}` : type, bytes);
    if (type === 'object' && name === 'Object') {
      const fields: string[] = [];
      let propertyArray = false;
      for (let i = 0; i < edgeCount; i += 1) {
        const at = edge + i * E;
        const target = edges[at + TO]!;
        if (types[nodes[target + TYPE]!] === 'hidden' && strings[nodes[target + NAME]!] === 'system / PropertyArray') propertyArray = true;
        if (kindsOfEdge[edges[at + EDGE_TYPE]!] === 'property' && fields.length < 3) fields.push(strings[edges[at + EDGE_NAME]!]!);
      }
      add(plain, fields.join(', '), bytes, propertyArray);
    }
    edge += edgeCount * E;
  }
  return { kinds, plain };
}

/**
 * The snapshot node writes on the signal, once it is whole: its JSON ends with `]}` and
 * its size held for a poll (a write may end with those two bytes too); `taken` are those
 * of earlier signals.
 */
async function snapshotIn(dir: string, taken: string[]): Promise<string> {
  let lastSize = -1;
  for (let i = 0; i < 2_400; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const name = readdirSync(dir).find((file) => file.endsWith('.heapsnapshot') && !taken.includes(join(dir, file)));
    if (name === undefined) continue;
    const path = join(dir, name);
    const size = statSync(path).size;
    const whole = size >= 2 && size === lastSize && readFileSync(path).subarray(size - 2).toString() === ']}';
    lastSize = size;
    if (whole) return path;
  }
  throw new Error('No whole heap snapshot within 10 minutes.');
}

async function main(): Promise<void> {
  const dir = join(TMP, 'census');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const server = await spawnServer('sandbox', process.execPath, ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`, 'dist/cli.js', '--port', '0', '--data', join(dir, 'sandbox.json'), '--token', BENCH_TOKEN, '--awb-delay', '1s'], {
    env: { NODE_ENV: 'production' },
    log: join(dir, 'sandbox.log'),
  });
  server.child.kill('SIGUSR2');
  const before = await snapshotIn(dir, []);
  const result = await autocannon({ url: `${server.url}/v1/order`, method: 'POST', connections: 10, amount: REQUESTS, headers: HEADERS, body: JSON.stringify(createRequest(ITEMS)) });
  const created = result['2xx'];
  if (created !== REQUESTS) throw new Error(`${REQUESTS - created} of ${REQUESTS} creates were not answered 2xx.`);
  const orders = created * ITEMS;
  const { caughtUpS } = await awbBacklog(server.url, await scrape(server.url), undefined, 300_000);
  if (caughtUpS === undefined) throw new Error('AWB generation did not catch up within 5 minutes.');
  server.child.kill('SIGUSR2');
  const after = await snapshotIn(dir, [before]);
  await stop(server.child);
  const empty = census(JSON.parse(readFileSync(before, 'utf8')) as Snapshot);
  const { kinds, plain } = census(JSON.parse(readFileSync(after, 'utf8')) as Snapshot);
  rmSync(dir, { recursive: true, force: true });
  const sum = (tallies: Map<string, Tally>) => [...tallies.values()].reduce((total, t) => ({ count: total.count + t.count, bytes: total.bytes + t.bytes }), { count: 0, bytes: 0 });
  const start = sum(empty.kinds);
  const all = sum(kinds);
  const total = { count: all.count - start.count, bytes: all.bytes - start.bytes };
  subtract(kinds, empty.kinds);
  subtract(plain, empty.plain);

  const perOrder = (n: number) => (n / orders).toFixed(2);
  console.log(`npm run bench:census: ${orders.toLocaleString('en')} orders created over HTTP (${REQUESTS.toLocaleString('en')} creates of ${ITEMS} items) and their AWBs (all generated ${caughtUpS} s after the load), against the heap before the load: ${total.count.toLocaleString('en')} more heap objects, ${(total.bytes / 2 ** 20).toFixed(1)} MB more; per order ${perOrder(total.count)} objects, ${Math.round(total.bytes / orders)} bytes.\n`);
  console.log('| kind of object | objects per order | bytes per order |');
  console.log('|---|---|---|');
  for (const [kind, tally] of [...kinds].sort((a, b) => b[1].count - a[1].count).slice(0, 10)) console.log(`| ${kind} | ${perOrder(tally.count)} | ${Math.round(tally.bytes / orders)} |`);
  console.log('\n| plain objects, first fields | per order | bytes each | with a property array |');
  console.log('|---|---|---|---|');
  for (const [fields, tally] of [...plain].sort((a, b) => b[1].count - a[1].count).slice(0, 6)) {
    console.log(`| ${fields || '(none)'} | ${perOrder(tally.count)} | ${Math.round(tally.bytes / Math.max(1, tally.count))} | ${tally.withPropertyArray.toLocaleString('en')} of ${tally.count.toLocaleString('en')} |`);
  }
}

await main();
process.exit(0);
