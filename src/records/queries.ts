import type { DeliveryStatus, WebhookEventType } from './delivery.js';
import type { OrderStatus } from './order.js';

/** How a long listing of the embedded store shares the event loop. */
export interface ListingPace {
  /**
   * What a long scan of the listing awaits between its slices: the request's turn again
   * (see OperationInput.between), so its time is its client's among the turns; without it,
   * the loop's waiting work goes first (letRequestsIn). A throw ends the scan (its client
   * hung up).
   */
  between?: () => Promise<void>;
}

/** Which of a client's orders a listing gives. */
export interface OrderQuery extends ListingPace {
  limit: number;
  cursor?: string;
  status?: OrderStatus;
  scenario?: string;
  courier_code?: string;
  /** Matches the order number, the AWB or the order code exactly. */
  search?: string;
}

/** Which of a client's webhook deliveries a listing gives. */
export interface DeliveryQuery extends ListingPace {
  limit: number;
  cursor?: string;
  order_no?: string;
  status?: DeliveryStatus;
  event?: WebhookEventType;
  /** Only the deliveries to this endpoint (`default`: those with no `endpoint_id`). */
  endpoint_id?: string;
  /** Only deliveries whose next attempt is due at or before this time (client-clock epoch ms). */
  dueBy?: number;
  /** Only deliveries whose next attempt is due after this time. */
  dueAfter?: number;
  /** False: the page's `total` is not counted (it is -1), for a caller that walks every page and needs none. */
  total?: boolean;
}

/** What `GET /__sandbox/requests` may filter on. */
export interface RequestFilter {
  operationId?: string;
  status?: number;
  /** Sandbox-clock epoch ms, inclusive. */
  since?: number;
  until?: number;
}
