import { plausibleCancel, plausibleCreate, plausibleDetail } from '../orders/index.js';
import { plausibleTracking, rebasedPhotos } from '../tracking/index.js';
import type { BodyReply, OperationInput } from './handler.js';

/**
 * Per provider operation, what makes a success generated from its schema one the
 * provider could send: the invariants a schema cannot state (order of the history,
 * one order number per item, an order detail's fields that go together). Keyed by
 * operationId, so a fuller provider spec (`--spec`) gets them for the same operations.
 */
const RULES: Record<string, (body: unknown, input: OperationInput) => void> = {
  createOrder: (body, input) => plausibleCreate(body, input.body),
  getOrderDetail: (body, input) => plausibleDetail((body as { data?: unknown }).data, input.params.order_no),
  cancelOrder: (body, input) => plausibleCancel(body, (input.body as { order_no?: unknown } | undefined)?.order_no),
  trackOrder: (body, input) => plausibleTracking(body, `${input.baseUrl}/__sandbox/pod/${encodeURIComponent(input.params.order_no ?? '')}.png`),
};

/** A generated reply with its operation's invariants restored (a success only; errors are the envelope). */
export function plausibleAnswer(input: OperationInput, reply: BodyReply): BodyReply {
  const rule = RULES[input.operation.operationId];
  if (rule && reply.status >= 200 && reply.status < 300 && reply.body !== undefined) rule(reply.body, input);
  return reply;
}

/** Per provider operation, what makes a documented example true of this sandbox (a copy; the spec's example is left as it is). */
const EXAMPLE_RULES: Record<string, (body: unknown, input: OperationInput) => unknown> = {
  trackOrder: (body, input) => rebasedPhotos(body, input.baseUrl),
  // The example's order numbers, as many as the request has items (a success's: an error envelope has none).
  createOrder: (body, input) => {
    if (typeof body !== 'object' || body === null || !Array.isArray((body as { order_numbers?: unknown }).order_numbers)) return body;
    const copy = structuredClone(body);
    plausibleCreate(copy, input.body);
    return copy;
  },
};

/** A documented example's reply with what names the sandbox's own address made to name the one the request came to. */
export function exampleAnswer(input: OperationInput, reply: BodyReply): BodyReply {
  const rule = EXAMPLE_RULES[input.operation.operationId];
  return rule && reply.body !== undefined ? { ...reply, body: rule(reply.body, input) } : reply;
}
