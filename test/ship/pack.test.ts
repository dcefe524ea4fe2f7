import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Slow (~30-60 s): npm pack builds dist/, then npm installs the tarball and its
// dependencies into an empty folder, as a user would.
const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production', npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
delete env.VITEST;

let work: string;
let tarball: string;
let app: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'sandbox-pack-'));
  await run('npm', ['pack', '--pack-destination', work], { cwd: ROOT, env, maxBuffer: 32 * 2 ** 20 });
  const name = readdirSync(work).find((f) => f.endsWith('.tgz'));
  if (!name) throw new Error(`npm pack wrote no tarball into ${work}`);
  tarball = join(work, name);
  app = join(work, 'app');
  await run('mkdir', ['-p', app]);
  await run('npm', ['install', '--no-package-lock', tarball], { cwd: app, env, maxBuffer: 32 * 2 ** 20 });
}, 240_000);
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Starts the installed CLI and resolves with its base URL once it prints `listening on`. */
function start(args: string[]): Promise<{ child: ChildProcess; url: string; lines: string[] }> {
  const child = spawn(join(app, 'node_modules/.bin/shipping-sandbox'), args, { cwd: app, env });
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no "listening on" line within 60 s')), 60_000);
    child.once('exit', (code) => reject(new Error(`the sandbox exited with ${code} before listening`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      const url = /listening on (http:\/\/\S+)/.exec(line)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve({ child, url, lines });
      }
    });
  });
}

describe('the npm package (npm pack, then npm install into an empty folder)', { timeout: 90_000 }, () => {
  it('holds the build, the specs and the fixtures, not the sources or tests', async () => {
    const { stdout } = await run('tar', ['tzf', tarball]);
    const files = stdout.split('\n');
    expect(files).toEqual(expect.arrayContaining(['package/dist/cli.js', 'package/dist/index.js', 'package/dist/index.d.ts', 'package/spec/openapi.yaml', 'package/spec/sandbox-control.yaml', 'package/package.json']));
    expect(files.some((f) => f.startsWith('package/fixtures/scenarios/'))).toBe(true);
    expect(files).toEqual(expect.arrayContaining(['package/dashboard/index.html', 'package/dashboard/main.js', 'package/dashboard/style.css']));
    expect(files.filter((f) => /^package\/(src|test|scripts|\.ci)\//.test(f))).toEqual([]);
  });

  it('runs `npx shipping-sandbox --help`', async () => {
    const { stdout } = await run('npx', ['shipping-sandbox', '--help'], { cwd: app, env });
    expect(stdout).toContain('Usage: shipping-sandbox');
    expect(stdout).toContain('--retention <duration>');
  });

  it('starts with --port 0 --data :memory:, answers the health check, the docs and the dashboard, and stops on SIGTERM', async () => {
    const { child, url, lines } = await start(['--port', '0', '--data', ':memory:', '--log-level', 'warn']);
    try {
      const health = await fetch(`${url}/__sandbox/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok' });
      const docs = await fetch(`${url}/docs/assets/swagger-ui-bundle.js`);
      expect(docs.status).toBe(200);
      expect(lines).toContain(`  docs:   ${url}/docs   dashboard: ${url}/dashboard`);
      for (const path of ['/dashboard', '/dashboard/app/main.js', '/dashboard/vendor/preact.mjs', '/dashboard/vendor/hooks.mjs', '/dashboard/vendor/htm.mjs']) {
        expect((await fetch(`${url}${path}`)).status, path).toBe(200);
      }
    } finally {
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });

  it("exports createSandbox for `import { createSandbox } from 'shipping-sandbox'`", async () => {
    const script = "import { createSandbox } from 'shipping-sandbox'; const s = await createSandbox({ clock: 'manual' }); const r = await fetch(s.url + '/__sandbox/health'); console.log(r.status); await s.close();";
    const { stdout } = await run('node', ['--input-type=module', '-e', script], { cwd: app, env });
    expect(stdout.trim()).toBe('200');
  });
});
