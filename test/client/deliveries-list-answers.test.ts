import { describe, expect, it } from 'vitest';
import { runDeliveries } from '../../src/client/deliveries.js';
import { heldServer, timed } from '../support/held-server.js';

const TOKEN = 'deliveries-list-answers-token';

/** One page of deliveries: one delivery of awb.generated to the listener endpoint `ep_d689`, delivered. */
const page = {
  deliveries: [{ id: 'msg_1', created_at: '2026-12-07T03:00:00.000Z', event: 'awb.generated', endpoint_id: 'ep_d689', order_no: '512345678901', status: 'delivered', last_error: null, attempts: [{ status_code: 204, error: null }] }],
  total: 1,
  next_cursor: null,
};

describe('shipping-sandbox deliveries list when the endpoint list cannot be read', () => {
  it('shows the endpoint by its id alone, says why on stderr, and exits 0 (the deliveries were read)', async () => {
    const sandbox = await heldServer((req, res) => {
      if (req.url?.startsWith('/__sandbox/webhooks/deliveries')) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(page));
      else res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ success: false, message: 'busy' }));
    });
    try {
      const { code, stdout, stderr } = await timed((out, err) => runDeliveries(['list', '--url', sandbox.url, '--token', TOKEN], out, err));
      expect(code).toBe(0);
      expect(stdout).toMatch(/msg_1 .*ep_d689/);
      expect(stderr).toBe('shipping-sandbox deliveries list: endpoints are shown by id: the list of endpoints could not be read (the sandbox answered 503: busy)\n');
    } finally {
      await sandbox.close();
    }
  });

  it('names the listener endpoint listener:NAME, and says nothing on stderr, when the list is read', async () => {
    const sandbox = await heldServer((req, res) => {
      const body = req.url?.startsWith('/__sandbox/webhooks/deliveries') ? page : { endpoints: [{ id: 'ep_d689', listener: 'laptop' }] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    try {
      const { code, stdout, stderr } = await timed((out, err) => runDeliveries(['list', '--url', sandbox.url, '--token', TOKEN], out, err));
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(stdout).toMatch(/msg_1 .*listener:laptop/);
    } finally {
      await sandbox.close();
    }
  });
});
