import { cancelMessages } from './cancel.js';

/**
 * Makes a create answer generated from the schema (`Prefer: dynamic=true`) one the
 * provider could send: one order number per item of the request, all different,
 * in the generated numbers' form (numeric text). Generated numbers are kept while
 * they last; more are made from the last by counting up. Changes `body` in place.
 *
 * @example plausibleCreate(body, { items: [{}, {}] }) // body.order_numbers has 2 numbers
 */
export function plausibleCreate(body: unknown, request: unknown): void {
  const items = (request as { items?: unknown } | undefined)?.items;
  if (typeof body !== 'object' || body === null || !Array.isArray(items)) return;
  const answer = body as { order_numbers?: unknown };
  const generated = Array.isArray(answer.order_numbers) ? answer.order_numbers.filter((n): n is string => typeof n === 'string' && /^[0-9]+$/.test(n)) : [];
  const numbers = [...new Set(generated)].slice(0, items.length);
  let next = BigInt(numbers.at(-1) ?? '100000000000');
  while (numbers.length < items.length) {
    next += 1n;
    if (!numbers.includes(String(next))) numbers.push(String(next));
  }
  answer.order_numbers = numbers;
}

/** The tracking status code of the newest scan that leaves an order in a status (in transit: after a pick-up or a failed delivery). */
const CODE_OF: Record<string, string> = { picked_up: '1', delivered: '2', delivery_failed: '3', returned: '4', cancelled: '5' };
const lastStatusOf = (status: string, generated: unknown): string | null =>
  status === 'awb_generated' ? null : status === 'in_transit' ? (generated === '3' ? '3' : '1') : (CODE_OF[status] ?? null);

/** The statuses of an order that has its AWB (and no cancel), from the sandbox's statuses. */
const WITH_AWB = new Set(['awb_generated', 'picked_up', 'in_transit', 'delivery_failed', 'delivered', 'returned']);

/**
 * Makes an order detail generated from the schema (`Prefer: dynamic=true` on the detail or
 * the cancel) one the provider could send: the order asked for, its item's order code, a
 * `cancelled_at` only on a cancelled order (a cancel's answer is one), an AWB and its time
 * only once generated, an `awb_error` only on `awb_failed`, and times in the order they
 * happen. Changes `detail` in place.
 *
 * @example plausibleDetail(detail, '508734411209', { cancelled: true }) // detail.status is 'cancelled'
 */
export function plausibleDetail(detail: unknown, orderNo: unknown, { cancelled = false } = {}): void {
  if (typeof detail !== 'object' || detail === null) return;
  const order = detail as Record<string, unknown>;
  if (typeof orderNo === 'string' && /^[0-9]+$/.test(orderNo)) order.order_no = orderNo;
  if (cancelled) order.status = 'cancelled';
  // The detail's order_code is its item's, as the sandbox's own details show it.
  const item = order.item as { order_code?: unknown } | undefined;
  if (typeof item === 'object' && item !== null && typeof item.order_code === 'string') order.order_code = item.order_code;
  const created = typeof order.created_at === 'number' ? order.created_at : 1;
  const hasAwb = WITH_AWB.has(String(order.status)) || (order.status === 'cancelled' && order.awb !== null);
  order.awb = hasAwb ? (typeof order.awb === 'string' && order.awb !== '' ? order.awb : `SBX${String(order.order_no)}`) : null;
  order.awb_generated_at = hasAwb ? Math.max(created, typeof order.awb_generated_at === 'number' ? order.awb_generated_at : created) : null;
  order.awb_error = order.status === 'awb_failed' ? (typeof order.awb_error === 'string' ? order.awb_error : 'AWB generation failed') : null;
  order.last_status = hasAwb ? lastStatusOf(String(order.status), order.last_status) : null;
  order.cancelled_at = order.status === 'cancelled' ? Math.max(created, (order.awb_generated_at as number | null) ?? created, typeof order.cancelled_at === 'number' ? order.cancelled_at : created) : null;
  const times = [created, order.awb_generated_at, order.cancelled_at, order.updated_at].filter((t): t is number => typeof t === 'number');
  order.updated_at = Math.max(...times);
}

/** A cancel's answer generated from the schema made one the provider could send: the order asked for, cancelled, and the message that says so. */
export function plausibleCancel(body: unknown, orderNo: unknown): void {
  if (typeof body !== 'object' || body === null) return;
  const answer = body as { message?: unknown; data?: { order_no?: unknown } };
  plausibleDetail(answer.data, orderNo, { cancelled: true });
  if (typeof answer.data?.order_no === 'string') answer.message = cancelMessages.cancelled(answer.data.order_no);
}
