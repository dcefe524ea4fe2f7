import type { SandboxEvent, PingPayload, WebhookPayload } from '../records/index.js';
import { epochSeconds as seconds } from '../records/index.js';

/**
 * The webhook body of an order event. Field order is fixed, so the body is the same
 * bytes on every attempt.
 *
 * @example payloadOf({ type: 'awb.generated', order, at }).awb // 'JN0012345678'
 */
export function payloadOf({ type, order, at }: SandboxEvent): WebhookPayload {
  const base = { batch_id: order.batch_id, order_no: order.order_no, order_code: order.item.order_code, courier_code: order.courier_code };
  switch (type) {
    case 'awb.generated':
      return { event: type, ...base, awb: order.awb ?? '', generated_at: seconds(order.awb_generated_at ?? at) };
    case 'awb.failed':
      return { event: type, ...base, reason: order.awb_error ?? 'AWB generation failed', failed_at: seconds(at) };
    case 'order.cancelled':
      return { event: type, ...base, awb: order.awb, cancelled_at: seconds(order.cancelled_at ?? at) };
  }
}

/** The body of the test ping. */
export function pingPayload(clientId: string, at: number): PingPayload {
  return { event: 'ping', client_id: clientId, message: 'Test webhook from the Shipping Order Sandbox.', sent_at: seconds(at) };
}
