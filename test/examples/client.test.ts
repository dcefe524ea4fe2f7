import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runExample, type ExampleRun } from '../../examples/client.js';
import { startCli, type RunningCli } from '../support/cli.js';

/** examples/client.ts (openapi-fetch on the generated types) against the real CLI, end to end. */
describe('examples/client.ts against the CLI', () => {
  let cli: RunningCli;
  let run: ExampleRun;
  beforeAll(async () => {
    cli = await startCli(['--port', '0', '--data', ':memory:', '--token', 'example-token', '--log-level', 'silent', '--awb-delay', '1h']);
    run = await runExample(cli.url, 'example-token');
  }, 60_000);
  afterAll(() => cli?.stop());

  it('creates the two orders of examples/order.json', () => {
    expect(run.orderNumbers).toHaveLength(2);
  });

  it('receives the AWB webhook, verified with the Standard Webhooks signature', () => {
    expect(run.awb).toMatch(/^JN[0-9]{10}$/);
    expect(run.webhookId).toMatch(/^msg_/);
  });

  it('tracks the order from the pick-up scan to delivery', () => {
    expect(run.statuses[0]).toBe('1');
    expect(run.statuses.at(-1)).toBe('2');
    expect(run.delivered.history[0]!.pod_photo).toMatch(new RegExp(`/__sandbox/pod/${run.awb}-[0-9a-f]{20}\\.png$`));
  });

  it('handles a 400 naming the field and a 404 for an unknown AWB', () => {
    expect(run.badRequestField).toBe('items[0].item_weight');
    expect(run.notFoundMessage).toBe('Record Not Found');
  });
});
