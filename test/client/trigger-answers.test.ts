import { describe, expect, it } from 'vitest';
import { runTrigger } from '../../src/client/trigger.js';
import { heldServer, timed } from '../support/held-server.js';

const TOKEN = 'trigger-answers-token';

describe('shipping-sandbox trigger --timeout', () => {
  it.each([
    [[], '`shipping-sandbox deliveries list`'],
    [['--order', '512345678901'], '`shipping-sandbox deliveries list --order-no 512345678901`'],
  ])('exits 2 saying the event may have fired all the same, and where to look (%j)', async (flags, look) => {
    const silent = await heldServer();
    try {
      const { code, stderr } = await timed((out, err) => runTrigger(['awb.generated', ...flags, '--url', silent.url, '--token', TOKEN, '--timeout', '200ms'], out, err));
      expect({ code, stderr }).toEqual({ code: 2, stderr: `shipping-sandbox trigger: no answer from ${silent.url} within 200ms; the event may have fired all the same: look for it with ${look} before triggering it again\n` });
    } finally {
      await silent.close();
    }
  });
});
