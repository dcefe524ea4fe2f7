import type { Clocks } from '../clock/index.js';
import type { Fixtures, LoadedScenario } from '../fixtures/index.js';
import type { Order } from '../records/index.js';
import type { Journey } from './journey.js';
import { magicHistory, magicScenario, trackingOf, type TrackingResponse } from './view.js';

/** A 200 tracking answer: its body, and the same body as JSON text, written once. */
export interface TrackingAnswer {
  status: 200;
  body: TrackingResponse;
  serialized: string;
}

const KEPT_ANSWERS = 10_000;

/**
 * The answer of `GET /v1/order/tracking/{order_no}` and its caches. Tracking is read far
 * more often than it changes (clients poll it), so an answer is made from three kept
 * parts, each keyed by something that never changes under it:
 *
 * 1. the order record: the embedded store hands out the same frozen object for repeated
 *    reads of an unchanged order (`UnpackedOrders` in store/embedded), so the caches
 *    below, keyed by that object or its parts, are found again;
 * 2. each played step rendered once as a tracking entry (`renderHistory` in render.ts,
 *    by step object; template values by order object);
 * 3. the whole answer, serialized, by order number, order version and the host the
 *    client reached (POD photo URLs carry it): a bounded map here, oldest out first.
 *
 * A change to an order makes a new version (a new key) and new objects, so no cache is
 * ever invalidated by hand.
 */
export class TrackingAnswers {
  private readonly kept = new Map<string, TrackingAnswer>();

  constructor(
    private readonly journey: Journey,
    private readonly fixtures: Fixtures,
    private readonly clock: Clocks,
  ) {}

  /** The answer for a stored order, or undefined before its first scan with a status (the provider's 404). */
  of(order: Order & { version: number }, baseUrl: string): TrackingAnswer | undefined {
    const key = `${order.order_no}|${order.version}|${baseUrl}`;
    const cached = this.kept.get(key);
    if (cached) return cached;
    const tracking = trackingOf(this.journey.history(order), baseUrl, this.journey.photos);
    if (!tracking) return undefined;
    const answer: TrackingAnswer = { status: 200, body: tracking, serialized: JSON.stringify(tracking) };
    if (this.kept.size >= KEPT_ANSWERS) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(key, answer);
    return answer;
  }

  /** The scenario whose magic AWB (one per scenario, trackable by every client) this is, if any. */
  magicScenario(awb: string): LoadedScenario | undefined {
    return magicScenario(this.fixtures, awb);
  }

  /** The tracking of a scenario's magic AWB on the client's clock (its journey ended a week ago). */
  magic(scenario: LoadedScenario, clientId: string, baseUrl: string): TrackingResponse | undefined {
    return trackingOf(magicHistory(this.fixtures, scenario, this.clock.of(clientId)), baseUrl, this.journey.photos);
  }
}
