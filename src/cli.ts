#!/usr/bin/env node
import { setFlagsFromString } from 'node:v8';
import { VERSION, mask } from './shared/index.js';
import { optionsOf, program, OPTIONS, OptionError, shownDatabase } from './config/index.js';
import { createSandbox } from './app/index.js';
import { webhookBannerLine } from './webhooks/index.js';
import { runDeliveries, runReport, runTrigger } from './client/index.js';

// A long-running sandbox holds its whole store in memory. V8's default lets the old
// space grow to several times the live data between full collections; 75% (the default
// of --heap-growth) keeps its limit under twice the live data (see
// docs/decisions/0001-journaled-store.md). While the data file loads, though, nearly
// everything allocated stays live: each full collection then only finds the heap grown,
// and a large file would pay for many of them. The heap grows by 300% until the sandbox listens, then by --heap-growth. A
// --heap-growing-percent given to node itself wins (node refuses it in NODE_OPTIONS; V8
// reads --heap_growing_percent as the same flag).
const tuneHeapGrowth = !process.execArgv.some((arg) => arg.replaceAll('_', '-').includes('heap-growing-percent'));
if (tuneHeapGrowth) setFlagsFromString('--heap-growing-percent=300');

async function main(): Promise<void> {
  const options = optionsOf(program().parse());
  const sandbox = await createSandbox(options);
  if (tuneHeapGrowth) setFlagsFromString(`--heap-growing-percent=${sandbox.services.options.heapGrowth}`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    sandbox.services.logger.info({ signal }, 'stopping');
    sandbox.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // Under npx / npm exec, npm runs the bin through `sh -c` and passes a SIGTERM to that shell only,
  // which dies without passing it on: this process is left orphaned (reparented). A changed parent
  // pid there means whoever started it was told to stop, so it stops as on SIGTERM. Only under npx:
  // a sandbox backgrounded from a script that then ends must keep running.
  if (process.env.npm_lifecycle_event === 'npx') {
    const parent = process.ppid;
    const watch = setInterval(() => {
      if (process.ppid === parent) return;
      clearInterval(watch);
      stop('parent gone');
    }, 250).unref();
  }
  // Only a token the sandbox generated (kept in the data file) is printed in full: stdout
  // ends up in `docker logs`, and configured tokens are the operator's to hand out.
  const generated = await sandbox.services.storage.meta.get('default_token');
  const { registry } = sandbox.services;
  const shown = (token: string) => (token === generated ? token : mask(token));
  const notShared = !registry.hasAdmin && registry.clientIds.length === 1;
  const lines = [
    `Shipping Order Sandbox ${VERSION} listening on ${sandbox.url}`,
    ...sandbox.clients.map((c) => `  token:  ${shown(c.token)}  (client ${c.id}, ${c.role})`),
    ...registry.adminTokens.map((t) => `  admin:  ${mask(t)}  (acts for a client named by X-Sandbox-Client)`),
    ...(await Promise.all(registry.clientIds.map((id) => webhookBannerLine(sandbox.services.endpoints, registry.byId(id)!, notShared)))),
    sandbox.services.options.databaseUrl !== undefined ? `  data:   ${shownDatabase(sandbox.services.options.databaseUrl)}` : `  data:   ${sandbox.services.options.data}`,
    `  clock:  ${sandbox.clock.mode}${sandbox.clock.mode === 'real' ? ` x${sandbox.services.options.speed}` : ''}`,
    `  docs:   ${sandbox.url}/docs   dashboard: ${sandbox.url}/dashboard`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

// `shipping-sandbox report ...`, `trigger ...` and `deliveries ...` talk to a running sandbox; anything else starts one.
const clientCommand = new Map([
  ['report', runReport],
  ['trigger', runTrigger],
  ['deliveries', runDeliveries],
]).get(process.argv[2] ?? '');
const started = clientCommand
  ? clientCommand(process.argv.slice(3), (text) => process.stdout.write(text), (text) => process.stderr.write(text)).then((code) => {
      process.exitCode = code;
    })
  : main();

started.catch((error: unknown) => {
  // Start-up failures (a corrupt data file, a port in use, a bad flag) are the user's to fix: a message, no stack.
  // An option only the start could check (a scenario, a spec) is named as commander names the others.
  const flag = error instanceof OptionError ? OPTIONS[error.option].flag : undefined;
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`shipping-sandbox: ${flag ? `option '${flag}' is invalid. ${message}` : message}\n`);
  process.exit(1);
});
