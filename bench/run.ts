/**
 * npm run bench: loads the sandbox and two reference servers, each in its own process
 * on 127.0.0.1, with autocannon (10 connections, a warm-up, then a few seconds per
 * case), at 0/10k/100k stored orders; prints a table and writes bench/RESULTS.md and
 * bench/results.json. BENCH_SECONDS (default 4) sets the length of each case;
 * BENCH_STORES (default 0,10000,100000) the store sizes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { createRequest } from '../test/support/orders.js';
import { BENCH_TOKEN, prefill } from './prefill.js';
import { measureWebhooks } from './webhooks-figure.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const STORES = (process.env.BENCH_STORES ?? '0,10000,100000').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const TMP = join(import.meta.dirname, 'tmp');

interface Server {
  url: string;
  child: ChildProcess;
  startupMs: number;
}

interface Row {
  server: string;
  store: number;
  case: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

function start(args: string[]): Promise<Server> {
  const began = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NODE_ENV: 'production' } });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve({ url: match[1]!, child, startupMs: performance.now() - began });
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}: ${out}`)));
  });
}

function memoryMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)![1]) / 1024);
}

async function stop(server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await exited;
}

async function load(url: string, method: 'GET' | 'POST', body?: string): Promise<{ rps: number; p50: number; p99: number; errors: number }> {
  const options = {
    url,
    method,
    connections: 10,
    headers: { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' },
    ...(body ? { body } : {}),
  };
  await autocannon({ ...options, duration: 2 }); // warm-up: lets V8 optimise the path first
  const result = await autocannon({ ...options, duration: SECONDS });
  return { rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.non2xx + result.timeouts };
}

const post1 = JSON.stringify(createRequest(1));
const post10 = JSON.stringify(createRequest(10));

async function main(): Promise<void> {
  rmSync(TMP, { recursive: true, force: true });
  mkdirSync(TMP, { recursive: true });
  const rows: Row[] = [];
  const servers: Record<string, { startupMs: number; idleMb: number; peakMb: number; finalPeakMb?: number }> = {};

  // The references run beside the empty sandbox and each case loads the three in turn,
  // so that the ratios compare figures taken under the same conditions of this shared machine.
  const references: Array<[string, Server, number]> = [];
  for (const [name, script] of [['node:http', 'ref-node.mjs'], ['express', 'ref-express.mjs']] as const) {
    const server = await start([join(import.meta.dirname, script)]);
    references.push([name, server, memoryMb(server.child.pid!, 'VmRSS')]);
  }
  for (const size of STORES) {
    const data = join(TMP, `store-${size}.json`);
    const awb = await prefill(data, Math.max(size, 1));
    const server = await start([
      'dist/cli.js', '--port', '0', '--data', data, '--token', BENCH_TOKEN, '--clock', 'manual', '--awb-delay', '1h', '--log-level', 'warn',
    ]);
    await new Promise((r) => setTimeout(r, 500));
    const idleMb = memoryMb(server.child.pid!, 'VmRSS');
    const cases = [
      ['GET tracking', 'GET', `/v1/order/tracking/${awb}`, undefined],
      ['POST 1 item', 'POST', '/v1/order', post1],
      ['POST 10 items', 'POST', '/v1/order', post10],
    ] as const;
    let peakMb = 0;
    for (const [name, method, path, body] of cases) {
      // Peak RSS "with N orders": before the 10-item case, which adds tens of thousands more.
      if (name === 'POST 10 items') peakMb = memoryMb(server.child.pid!, 'VmHWM');
      const sandboxUrl = `${server.url}${path}`;
      if (size !== STORES[0] || name === 'POST 10 items') {
        rows.push({ server: 'sandbox', store: size, case: name, ...(await load(sandboxUrl, method, body)) });
        continue;
      }
      // The ratio cases: the references and the sandbox in turn, ROUNDS times, best of each.
      const express = references.find(([ref]) => ref === 'express')![1];
      const contenders: Array<[string, string]> = [
        ...references.map(([ref, refServer]): [string, string] => [ref, `${refServer.url}${path}`]),
        ...(method === 'GET' ? [['express, same-size body', `${express.url}/full${path}`] as [string, string]] : []),
        ['sandbox', sandboxUrl],
      ];
      const best = new Map<string, Awaited<ReturnType<typeof load>>>();
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const [who, url] of contenders) {
          const result = await load(url, method, body);
          if ((best.get(who)?.rps ?? -1) < result.rps) best.set(who, result);
        }
      }
      for (const [who, result] of best) rows.push({ server: who, store: size, case: name, ...result });
    }
    servers[`sandbox ${size}`] = { startupMs: Math.round(server.startupMs), idleMb, peakMb, finalPeakMb: memoryMb(server.child.pid!, 'VmHWM') };
    await stop(server);
    console.log(`sandbox with ${size} orders: done`);
  }
  for (const [name, server, idleMb] of references) {
    servers[name] = { startupMs: Math.round(server.startupMs), idleMb, peakMb: memoryMb(server.child.pid!, 'VmHWM') };
    await stop(server);
  }

  const webhooks = await measureWebhooks(1_000);
  rmSync(TMP, { recursive: true, force: true });
  report(rows, servers, webhooks);
}

function report(rows: Row[], servers: Record<string, { startupMs: number; idleMb: number; peakMb: number; finalPeakMb?: number }>, webhooks: { count: number; ms: number }): void {
  const find = (server: string, store: number, c: string) => rows.find((r) => r.server === server && r.store === store && r.case === c)!;
  const targets = [
    ['GET tracking ≥ 0.7× express', find('sandbox', 0, 'GET tracking').rps / find('express', 0, 'GET tracking').rps, 0.7],
    ['(for reference) GET tracking vs express answering a body of the same size', find('sandbox', 0, 'GET tracking').rps / find('express, same-size body', 0, 'GET tracking').rps, 0],
    ['GET tracking ≥ 0.09× node:http', find('sandbox', 0, 'GET tracking').rps / find('node:http', 0, 'GET tracking').rps, 0.09],
    ['durable POST 1 item ≥ 0.5× express', find('sandbox', 0, 'POST 1 item').rps / find('express', 0, 'POST 1 item').rps, 0.5],
    ['POST 1 item at 100k ≥ 0.7× at 0', find('sandbox', 100_000, 'POST 1 item').rps / find('sandbox', 0, 'POST 1 item').rps, 0.7],
  ] as const;
  const limits = [
    ['POST 1 item p99 at 100k ≤ 25 ms', find('sandbox', 100_000, 'POST 1 item').p99, 25, 'ms'],
    ['startup empty ≤ 1500 ms', servers['sandbox 0']!.startupMs, 1500, 'ms'],
    ['startup 100k ≤ 4000 ms', servers['sandbox 100000']!.startupMs, 4000, 'ms'],
    ['RSS idle empty ≤ 250 MB', servers['sandbox 0']!.idleMb, 250, 'MB'],
    ['RSS peak with 100k orders (GET and 1-item load) ≤ 700 MB', servers['sandbox 100000']!.peakMb, 700, 'MB'],
    ['1,000 webhooks delivered ≤ 5000 ms after falling due', webhooks.ms, 5000, 'ms'],
  ] as const;
  const lines = [
    '# Benchmark results',
    '',
    `Run ${new Date().toISOString()} on ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}.`,
    `autocannon, 10 connections, 2 s warm-up then ${SECONDS} s per case; every server in its own process on 127.0.0.1;`,
    `the two references run beside the empty sandbox and each ratio case loads them in turn, ${ROUNDS} rounds, best of each;`,
    'the sandbox runs from dist/ with a manual clock and `--log-level warn`; "store" is the number of delivered orders in the data file at start.',
    '',
    '| server | store | case | rps | p50 ms | p99 ms | errors |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.server} | ${r.store.toLocaleString('en')} | ${r.case} | ${r.rps.toLocaleString('en')} | ${r.p50} | ${r.p99} | ${r.errors} |`),
    '',
    '| server | startup ms | RSS idle MB | RSS peak MB | RSS peak MB after the 10-item case |',
    '|---|---|---|---|---|',
    ...Object.entries(servers).map(([name, s]) => `| ${name} | ${s.startupMs} | ${s.idleMb} | ${s.peakMb} | ${s.finalPeakMb ?? ''} |`),
    '',
    `Webhooks: ${webhooks.count} AWB webhooks reached a local receiver ${webhooks.ms} ms after one clock advance made them due.`,
    '',
    '## Targets',
    '',
    '| target | measured | met |',
    '|---|---|---|',
    ...targets.map(([name, ratio, min]) => `| ${name} | ${ratio.toFixed(2)}× | ${min === 0 ? '(no target)' : ratio >= min ? 'yes' : '**no**'} |`),
    ...limits.map(([name, value, max, unit]) => `| ${name} | ${value} ${unit} | ${value <= max ? 'yes' : '**no**'} |`),
    '',
  ];
  const text = lines.join('\n');
  console.log(text);
  writeFileSync(join(import.meta.dirname, 'RESULTS.md'), text);
  writeFileSync(join(import.meta.dirname, 'results.json'), `${JSON.stringify({ date: new Date().toISOString(), seconds: SECONDS, rows, servers, webhooks }, null, 2)}\n`);
}

await main();
