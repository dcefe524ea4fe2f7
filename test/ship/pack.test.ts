import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequest } from '../support/orders.js';

// Slow (~2-8 min, most of it npm pack's build and npm install): npm pack builds dist/, then npm installs the tarball and its dependencies
// into an empty folder, as a user would, and runs there what the README and the manual show:
// the bin (directly and through npx), `import`, `require`, the Testcontainers module's import,
// the in-process vitest example, the Jest recipe with Jest itself and the CI workflow.
const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production', npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
delete env.VITEST;

/** The code blocks of a manual page whose first line is `// PATH` (a file of the recipe), by PATH. */
function recipeFiles(page: string): Map<string, string> {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const files = new Map<string, string>();
  for (const [, body] of text.matchAll(/```(?:js|ts)\n([\s\S]*?)```/g)) {
    const path = /^\/\/ ([\w./-]+\.[cm]?[jt]s)\b/.exec(body!)?.[1];
    if (path) files.set(path, body!);
  }
  return files;
}

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
  // A client project of its own: the tarball, and what the manual's recipes run with (Jest, vitest,
  // the testcontainers library the module is built on, TypeScript), from npm's cache or the registry.
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'client-app', private: true, scripts: { 'test:contract': 'node -e "console.log(\'contract tests\')"' } }));
  await run('npm', ['install', '--no-package-lock', '--prefer-offline', tarball, 'jest@30', 'vitest@4', 'testcontainers@11', 'typescript@5.9'], { cwd: app, env, maxBuffer: 32 * 2 ** 20 });
}, 1_200_000);
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Starts the installed CLI (or the command given, e.g. npx) and resolves with its base URL once it prints `listening on`. */
function start(args: string[], command = [join(app, 'node_modules/.bin/shipping-sandbox')]): Promise<{ child: ChildProcess; url: string; lines: string[] }> {
  const child = spawn(command[0]!, [...command.slice(1), ...args], { cwd: app, env });
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
  it("leaves the clone's bin executable: npx from the clone runs the rebuilt CLI", () => {
    // npm makes a bin executable when it installs or links it, not when the build rewrites it:
    // npx's cached link to the clone's dist/cli.js would then answer `Permission denied`.
    expect(statSync(join(ROOT, 'dist/cli.js')).mode & 0o111).toBe(0o111);
  });

  it('holds the build, the specs and the fixtures, not the sources or tests', async () => {
    const { stdout } = await run('tar', ['tzf', tarball]);
    const files = stdout.split('\n');
    expect(files).toEqual(expect.arrayContaining(['package/dist/cli.js', 'package/dist/index.js', 'package/dist/index.d.ts', 'package/spec/openapi.yaml', 'package/spec/sandbox-control.yaml', 'package/package.json']));
    expect(files.some((f) => f.startsWith('package/fixtures/scenarios/'))).toBe(true);
    expect(files).toEqual(expect.arrayContaining(['package/dashboard/index.html', 'package/dashboard/main.js', 'package/dashboard/style.css']));
    expect(files.filter((f) => /^package\/(src|test|scripts|\.ci)\//.test(f))).toEqual([]);
  });

  it("has a manual whose every link to a file of its own leads to a file the package holds", () => {
    const root = join(app, 'node_modules/shipping-sandbox');
    const pages = ['README.md', ...readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' }).map((f) => join('docs', f))].filter((f) => f.endsWith('.md'));
    expect(pages.length).toBeGreaterThan(20);
    const missing: string[] = [];
    for (const page of pages) {
      for (const [, target] of readFileSync(join(root, page), 'utf8').matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        if (!existsSync(join(root, dirname(page), target!))) missing.push(`${page} -> ${target}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('has source maps that carry the TypeScript they map, as the sources are not shipped', () => {
    const map = JSON.parse(readFileSync(join(app, 'node_modules/shipping-sandbox/dist/app/sandbox.js.map'), 'utf8')) as { sources: string[]; sourcesContent?: string[] };
    expect(map.sources).toEqual(['../../src/app/sandbox.ts']);
    expect(map.sourcesContent?.[0]).toContain('export async function createSandbox');
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

  it('stops (exit 0, data kept) when the npx that started it is sent SIGTERM, which npx does not pass on', async () => {
    const data = join(work, 'npx-data.json');
    const args = ['--port', '0', '--data', data, '--token', 'npx-token', '--log-level', 'warn'];
    const headers = { authorization: 'Bearer npx-token', 'content-type': 'application/json' };
    const first = await start(args, ['npx', 'shipping-sandbox']);
    const created = await fetch(`${first.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(1)) });
    expect(created.status).toBe(201);
    const { order_numbers } = (await created.json()) as { order_numbers: string[] };
    const npxExited = new Promise<number | null>((resolve) => first.child.once('exit', (code) => resolve(code)));
    first.child.kill('SIGTERM');
    await npxExited;
    // The sandbox itself (npx's grandchild) closes its port within a few seconds.
    const closed = await (async () => {
      for (const until = Date.now() + 20_000; Date.now() < until; await new Promise((r) => setTimeout(r, 200))) {
        try {
          await fetch(`${first.url}/__sandbox/health`);
        } catch {
          return true;
        }
      }
      return false;
    })();
    expect(closed, 'the port still answers after npx was sent SIGTERM').toBe(true);
    // Stopped gracefully: the data file lock is released and the order is there on the next start.
    const second = await start(args);
    try {
      expect((await fetch(`${second.url}/__sandbox/orders/${order_numbers[0]}`, { headers })).status).toBe(200);
    } finally {
      second.child.kill('SIGTERM');
    }
  });

  it("works with require('shipping-sandbox') (the manual's CommonJS script) as with import, the same module", async () => {
    const text = readFileSync(join(ROOT, 'docs/guides/install.md'), 'utf8');
    const script = /```js\n(\/\/ a CommonJS script\n[\s\S]*?)```/.exec(text)![1]!;
    const { stdout } = await run('node', ['-e', script], { cwd: app, env });
    expect(stdout.trim()).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const same = "const cjs = require('shipping-sandbox'); import('shipping-sandbox').then((esm) => console.log(esm.createSandbox === cjs.createSandbox));";
    expect((await run('node', ['-e', same], { cwd: app, env })).stdout.trim()).toBe('true');
  });

  it('type-checks in a strict TypeScript project without skipLibCheck, with no @types package installed by hand', async () => {
    // The declarations refer to express's and ws's: their types come with the package.
    writeFileSync(join(app, 'tsconfig.strict.json'), JSON.stringify({ compilerOptions: { strict: true, skipLibCheck: false, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022' }, files: ['strict.mts'] }));
    writeFileSync(
      join(app, 'strict.mts'),
      [
        "import { createSandbox, type Sandbox, type SandboxOptions } from 'shipping-sandbox';",
        "const options: SandboxOptions = { clock: 'manual', tokens: ['test-token'], seed: 1 };",
        'const sandbox: Sandbox = await createSandbox(options);',
        "sandbox.app.get('/mine', (_req, res) => void res.send('ok'));",
        'await sandbox.clock.advance(1_000);',
        'await sandbox.close();',
      ].join('\n'),
    );
    const result = await run(join(app, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.strict.json'], { cwd: app, env }).catch((error: { stdout: string; code: number }) => error);
    expect(result.stdout).toBe('');
  });

  it('exports the Testcontainers module as shipping-sandbox/testcontainers', async () => {
    const script =
      "import { ShippingSandboxContainer } from 'shipping-sandbox/testcontainers'; const c = new ShippingSandboxContainer('shipping-sandbox:latest', { seed: 1 }); console.log(typeof c.start);";
    expect((await run('node', ['--input-type=module', '-e', script], { cwd: app, env })).stdout.trim()).toBe('function');
  });

  it("runs the manual's in-process vitest example as written, with vitest, in the client project", async () => {
    const text = readFileSync(join(ROOT, 'docs/guides/ci-and-readiness.md'), 'utf8');
    const example = [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes("from 'shipping-sandbox'") && b.includes('beforeAll'))!;
    mkdirSync(join(app, 'test'), { recursive: true });
    writeFileSync(join(app, 'test/in-process.test.ts'), example);
    const { stdout } = await run('npx', ['--no', 'vitest', 'run', 'test/in-process.test.ts'], { cwd: app, env, maxBuffer: 32 * 2 ** 20 });
    expect(stdout.replace(/\x1b\[[0-9;]*m/g, '')).toMatch(/Tests\s+1 passed/);
  });

  it("runs the manual's Jest recipe with Jest itself, without --experimental-vm-modules", async () => {
    const files = recipeFiles('docs/guides/install.md');
    expect([...files.keys()].sort()).toEqual(['jest.config.js', 'test/awb.test.js', 'test/sandbox-setup.mjs', 'test/sandbox-teardown.mjs']);
    const jestApp = join(app, 'jest-project');
    for (const [path, body] of files) {
      mkdirSync(dirname(join(jestApp, path)), { recursive: true });
      writeFileSync(join(jestApp, path), body);
    }
    writeFileSync(join(jestApp, 'package.json'), JSON.stringify({ name: 'jest-project', private: true }));
    const jestEnv = { ...env, NODE_OPTIONS: '' };
    const result = await run(join(app, 'node_modules/.bin/jest'), ['--ci', '--rootDir', jestApp], { cwd: jestApp, env: jestEnv, maxBuffer: 32 * 2 ** 20 }).catch((error: { stdout: string; stderr: string }) => error);
    expect(result.stderr).toMatch(/Tests:\s+1 passed, 1 total/);
  });

  it("runs the README's CI workflow as written (but on a free port) in the client project, up to the report's gate", async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const block = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes('shipping-sandbox report'))!;
    // Each `- run:` step (a `|` step takes the indented lines below it), as GitHub Actions runs it: its own bash.
    const steps: string[] = [];
    for (const line of block.split('\n')) {
      const step = /^- run: (.*)$/.exec(line)?.[1];
      if (step !== undefined) steps.push(step === '|' ? '' : step);
      else if (/^ {4}/.test(line) && steps.length > 0) steps[steps.length - 1] += `${line.slice(4)}\n`;
    }
    expect(steps.length).toBeGreaterThanOrEqual(5);
    const server = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    // The client's contract tests (npm run test:contract) stand in as a script that points the
    // client's webhooks at a receiver in this process, creates an order and, as the README's
    // workflow says its tests end, runs the webhook checks while that receiver listens.
    const hooks: string[] = [];
    const receiver = createHttpServer((req, res) => {
      req.on('data', (chunk: Buffer) => hooks.push(chunk.toString())).on('end', () => res.end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`;
    writeFileSync(
      join(app, 'contract.mjs'),
      [
        "const base = `http://127.0.0.1:${process.env.SANDBOX_PORT}`;",
        "const headers = { authorization: `Bearer ${process.env.CLIENT_TOKEN}`, 'content-type': 'application/json' };",
        "const put = await fetch(`${base}/__sandbox/webhook`, { method: 'PUT', headers, body: JSON.stringify({ url: process.env.RECEIVER_URL }) });",
        'const spec = await (await fetch(`${base}/__sandbox/openapi.json`)).json();',
        "const example = spec.paths['/v1/order'].post.requestBody.content['application/json'].examples.twoParcels.value;",
        "const created = await fetch(`${base}/v1/order`, { method: 'POST', headers, body: JSON.stringify(example) });",
        'if (put.status !== 200 || created.status !== 201) process.exit(1);',
        "const checks = await fetch(`${base}/__sandbox/checks`, { method: 'POST', headers });",
        'if (checks.status !== 200) process.exit(1);',
      ].join('\n'),
    );
    const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    pkg.scripts['test:contract'] = 'node contract.mjs';
    writeFileSync(join(app, 'package.json'), JSON.stringify(pkg));
    const stepEnv = { ...env, CLIENT_TOKEN: 'ci-token', GITHUB_RUN_ID: '4242', SANDBOX_PORT: String(server), RECEIVER_URL: receiverUrl };
    const background = spawn('bash', ['-c', steps[0]!.replaceAll('4010', String(server))], { cwd: app, env: stepEnv, detached: true, stdio: 'ignore' });
    try {
      const results: Array<{ step: string; code: number; stderr: string }> = [];
      for (const step of steps.slice(1)) {
        results.push(
          await new Promise((resolve) => {
            let stderr = '';
            const child = spawn('bash', ['-e', '-c', step.replaceAll('4010', String(server))], { cwd: app, env: stepEnv, stdio: ['ignore', 'ignore', 'pipe'] });
            child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
            child.once('close', (code) => resolve({ step: step.split('\n')[0]!, code: code ?? 1, stderr }));
          }),
        );
      }
      // Every step succeeds but the gate: a project whose contract tests do nothing handles nothing.
      const gate = results.pop()!;
      expect(results.filter((r) => r.code !== 0)).toEqual([]);
      expect(gate).toMatchObject({ code: 1, stderr: expect.stringMatching(/below --fail-under 80/) });
      expect(hooks.length).toBeGreaterThan(0);
      const xml = readFileSync(join(app, 'readiness.xml'), 'utf8');
      expect(xml).toContain('<testsuites name="shipping-sandbox readiness"');
      expect(xml).toContain('run 4242');
    } finally {
      receiver.close();
      try {
        process.kill(-background.pid!, 'SIGTERM');
      } catch {
        // already gone
      }
    }
  });
});
