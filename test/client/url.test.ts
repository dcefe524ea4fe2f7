import { describe, expect, it } from 'vitest';
import { runDeliveries, runListen, runReport, runTrigger } from '../../src/client/index.js';

type Run = (err: (t: string) => void) => Promise<number>;
const none = () => {};
const LISTENING = ['--token', 't', '--forward-to', 'http://localhost:3000/hooks'];

/** Each flag that takes a URL, given a host and port with no scheme, and the example its message shows. */
const CASES: Array<[string, string, Run]> = [
  ['report --url', 'http://127.0.0.1:4010', (err) => runReport(['--url', 'localhost:4010', '--token', 't'], none, err)],
  ['trigger --url', 'http://127.0.0.1:4010', (err) => runTrigger(['awb.generated', '--url', 'localhost:4010', '--token', 't'], none, err)],
  ['deliveries list --url', 'http://127.0.0.1:4010', (err) => runDeliveries(['list', '--url', 'localhost:4010', '--token', 't'], none, err)],
  ['deliveries recover --url', 'http://127.0.0.1:4010', (err) => runDeliveries(['recover', '--url', 'localhost:4010', '--token', 't', '--since', '2026-01-01T00:00:00Z'], none, err)],
  ['listen --url', 'https://sandbox.example', (err) => runListen(['--url', 'localhost:4010', ...LISTENING], none, err, {}, new AbortController().signal)],
  ['listen --forward-to', 'http://localhost:3000/hooks', (err) => runListen(['--url', 'http://127.0.0.1:4010', '--token', 't', '--forward-to', 'localhost:3002/hooks'], none, err, {}, new AbortController().signal)],
];

describe('a client command given a URL with no scheme (localhost:4010)', () => {
  it.each(CASES)('%s exits 2 asking for an absolute http:// or https:// URL, with an example', async (_flag, example, run) => {
    let stderr = '';
    expect(await run((t) => void (stderr += t))).toBe(2);
    expect(stderr).toContain(`must be an absolute http:// or https:// URL, e.g. ${example}`);
  });
});

describe('a URL whose query holds another URL', () => {
  it('is still one without a scheme when it starts with a host (localhost:4010/?next=http://x)', async () => {
    let stderr = '';
    expect(await runReport(['--url', 'localhost:4010/?next=http://x', '--token', 't'], none, (t) => void (stderr += t))).toBe(2);
    expect(stderr).toContain('must be an absolute http:// or https:// URL, e.g. http://127.0.0.1:4010');
  });
});
