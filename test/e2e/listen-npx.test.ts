import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/index.js';

// npx runs the bin through `sh -c` and passes a SIGTERM to that shell only. Here a shell
// started with npx's variable runs `listen` in the background, as npx's shell does, and is
// then sent SIGTERM: `listen` is left orphaned, as under npx. (test/ship/pack.test.ts does
// the same to the server through npx itself.)
const TOKEN = 'listen-npx-token';
/** Prints the exit code of the process it is loaded into, which the shell that started it no longer sees. */
const EXIT_CODE = 'data:text/javascript,process.on("exit",(code)=>process.stdout.write(`exit code ${code}\\n`))';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await createSandbox({ port: 0, data: ':memory:', clock: 'manual', tokens: [TOKEN], logLevel: 'silent' });
});
afterAll(() => sandbox?.close());

describe('shipping-sandbox listen started through npx', () => {
  it('exits 0 once the npx that started it is sent SIGTERM, which npx does not pass on', async () => {
    const listen = [process.execPath, '--import', 'tsx', '--import', EXIT_CODE, 'src/cli.ts', 'listen', '--url', sandbox.url, '--token', TOKEN, '--forward-to', 'http://127.0.0.1:9/hooks'];
    const quoted = listen.map((arg) => `'${arg}'`).join(' ');
    const shell = spawn('sh', ['-c', `${quoted} & echo "pid $!"; wait`], { env: { ...process.env, NODE_ENV: 'production', npm_lifecycle_event: 'npx' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    shell.stdout.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    shell.stderr.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    // Its stdout closes once every process holding it, the orphaned listener too, has ended.
    const closed = new Promise<void>((resolve) => shell.stdout.once('close', resolve));
    const within = (ms: number, what: Promise<unknown>) => Promise.race([what.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);
    let pid: number | undefined;
    try {
      const until = Date.now() + 30_000;
      while (!/^Ready: /m.test(output) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(output).toMatch(/^Ready: listener /m);
      pid = Number(/^pid (\d+)$/m.exec(output)![1]);
      shell.kill('SIGTERM');
      expect(await within(10_000, closed), `listen still runs 10 s after its npx was sent SIGTERM:\n${output}`).toBe(true);
      expect(output).toMatch(/^exit code 0$/m);
    } finally {
      if (pid !== undefined) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already ended.
        }
      }
    }
  }, 60_000);
});
