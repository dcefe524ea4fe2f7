/** The item of the create request, as the client sent it (all text). */
export interface OrderItem {
  order_code: string;
  receiver_name: string;
  receiver_phone: string;
  receiver_address: string;
  receiver_addr_id: string;
  service_code: string;
  item_width?: string;
  item_height?: string;
  item_length?: string;
  item_value: string;
  item_weight: string;
  item_qty: string;
  item_name: string;
  item_category?: string;
  insurance?: string;
  cod?: string;
}

/** The create request (provider-interface.md 2.1). */
export interface CreateOrderRequest {
  sender_name: string;
  sender_addr_id: string;
  sender_address: string;
  sender_phone: string;
  pickup_via: string;
  order_type: string;
  input_type: number;
  items: OrderItem[];
  courier_code: string;
  sender_latitude?: string;
  sender_longitude?: string;
}

export type Sender = Omit<CreateOrderRequest, 'items' | 'courier_code'>;

/** One entry of a tracking history (provider-interface.md 2.4). */
export interface TrackingEntry {
  note: string;
  description: string;
  branch: string;
  update_on: number;
  status: string | null;
  /** Stored as a sandbox path; answered as an absolute URL. */
  pod_photo: string | null;
}

/**
 * A played scenario step as the store keeps it: the step's index in the order's
 * scenario and when it happened (epoch ms). Its text is rendered from the scenario
 * when read, which keeps 100k stored orders small.
 */
export interface PlayedStep {
  step: number;
  at: number;
}

/** One entry of an order's history: a played step, or an entry written out in full (e.g. a cancellation). */
export type HistoryRecord = PlayedStep | TrackingEntry;

export const isPlayedStep = (entry: HistoryRecord): entry is PlayedStep => 'step' in entry;

/** Unix epoch seconds of sandbox milliseconds, as tracking, detail and webhooks write times. */
export const epochSeconds = (ms: number): number => Math.floor(ms / 1000);

/** Unix epoch seconds of a history entry. */
export const secondsOf = (entry: HistoryRecord): number => (isPlayedStep(entry) ? epochSeconds(entry.at) : entry.update_on);

/**
 * Where an order is. `created` waits for its AWB; the others follow the scenario's
 * status codes: "1" picked_up, null after pick-up in_transit, "3" delivery_failed,
 * "2" delivered, "4" returned, "5" cancelled.
 */
export type OrderStatus =
  | 'created'
  | 'awb_generated'
  | 'awb_failed'
  | 'picked_up'
  | 'in_transit'
  | 'delivery_failed'
  | 'delivered'
  | 'returned'
  | 'cancelled';

/** The fields that name an order and its courier service, as every view of an order starts. */
export const orderIdentity = (order: Order) => ({
  order_no: order.order_no,
  batch_id: order.batch_id,
  order_code: order.item.order_code,
  courier_code: order.courier_code,
  service_code: order.item.service_code,
});

/** An order as the store keeps it. Times are epoch milliseconds of the sandbox clock. */
export interface Order {
  order_no: string;
  batch_id: string;
  client_id: string;
  courier_code: string;
  scenario: string;
  status: OrderStatus;
  sender: Sender;
  item: OrderItem;
  awb: string | null;
  awb_due_at: number | null;
  awb_generated_at: number | null;
  awb_error: string | null;
  /** When step 0 of the scenario is measured from (the AWB time, shifted by manual advances). */
  journey_start: number | null;
  /** Index of the next scenario step to play, or null when the journey is over. */
  next_step: number | null;
  /** Tracking history so far, newest first. */
  history: HistoryRecord[];
  /** Webhook chaos modes asked for at create time (X-Sandbox-Webhook-Chaos). */
  webhook_chaos?: string[];
  created_at: number;
  updated_at: number;
  cancelled_at: number | null;
}
