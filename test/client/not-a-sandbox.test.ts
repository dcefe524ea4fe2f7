import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDeliveries, runReport, runTrigger } from '../../src/client/index.js';
import { heldServer, timed, type HeldServer } from '../support/held-server.js';

/** Whatever answers at --url answers 200 with this body (a proxy's page, another service, a stub). */
let body = '';
let server: HeldServer;
beforeAll(async () => {
  server = await heldServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
});
afterAll(() => server.close());

const COMMANDS: Array<[string, (out: (t: string) => void, err: (t: string) => void) => Promise<number>]> = [
  ['trigger', (out, err) => runTrigger(['awb.generated', '--url', server.url, '--token', 't'], out, err)],
  ['deliveries list', (out, err) => runDeliveries(['list', '--url', server.url, '--token', 't'], out, err)],
  ['deliveries recover', (out, err) => runDeliveries(['recover', '--url', server.url, '--token', 't', '--since', '2026-01-01T00:00:00Z'], out, err)],
  ['report', (out, err) => runReport(['--url', server.url, '--token', 't', '--fail-under', '10'], out, err)],
];
const BODIES = ['<html>a proxy</html>', 'null', '[]', '{}', '"ok"', '{"order":null,"deliveries":[null]}', '{"deliveries":[null],"next_cursor":null}', '{"summary":{"handled_percent":50},"coverage":{"summary":{"percent":1}},"items":[null]}'];

describe('a client command whose --url answers 200 with a body no sandbox gives', () => {
  for (const [name, command] of COMMANDS) {
    it.each(BODIES)(`${name} exits 2 asking whether it is a shipping sandbox, printing nothing on stdout, for %s`, async (given) => {
      body = given;
      const { code, stdout, stderr } = await timed(command);
      expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
      expect(stderr).toMatch(new RegExp(`^shipping-sandbox ${name}: http://127\\.0\\.0\\.1:\\d+/? answered 200 with .*: is it a shipping sandbox\\?\\n$`));
    });
  }
});
