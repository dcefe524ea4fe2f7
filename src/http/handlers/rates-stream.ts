import type { Fixtures, Courier } from '../../fixtures/index.js';
import { clientOf, type Handler, type ReplySink } from '../handler.js';
import { draw } from '../../ids/index.js';
import { quoteCourier, type RateRequest, readRateQuery, SHIPPING_FEE_PARAMS } from '../../rates/index.js';
/** Real milliseconds each courier quote takes to "compute": 50-149 ms, fixed per courier and seed. */
export const QUOTE_DELAY_MS = { min: 50, spread: 100 } as const;

/** What the stream is doing, for tests and the logs. */
export interface StreamStats {
  /** Streams being written now. */
  open: number;
  /** Courier quotes computed since start, over every stream. */
  quotes: number;
}

const frame = (event: string, data: unknown, id?: number): string =>
  `event: ${event}\n${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`;

/**
 * GET /v1/rates/shipping-fee/stream: the shipping fee as server-sent events, one
 * `quote` event per courier as it is "computed" (after a short real delay each),
 * then one `done` event. When the client goes away the pending timer is cleared and
 * nothing more is computed for that stream.
 */
export class ShippingFeeStream {
  readonly stats: StreamStats = { open: 0, quotes: 0 };
  private readonly stops = new Set<(end: boolean) => void>();

  constructor(
    private readonly fixtures: Fixtures,
    private readonly seed: string,
  ) {}

  readonly handler: Handler = (input) => {
    const { request, couriers } = readRateQuery(this.fixtures, clientOf(input), input.query, SHIPPING_FEE_PARAMS);
    return {
      status: 200,
      headers: {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-cache',
        Connection: 'keep-alive',
        'X-Accel-Buffering': 'no',
      },
      stream: (sink) => this.play(sink, couriers, request),
    };
  };

  private play(sink: ReplySink, couriers: Courier[], request: RateRequest): void {
    let index = 0;
    let timer: NodeJS.Timeout | undefined;
    const stop = (end: boolean): void => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (this.stops.delete(stop)) this.stats.open -= 1;
      if (end) sink.end();
    };
    const next = (): void => {
      const courier = couriers[index];
      if (!courier) {
        sink.end(frame('done', { success: true, count: couriers.length }));
        stop(false);
        return;
      }
      timer = setTimeout(() => {
        timer = undefined;
        this.stats.quotes += 1;
        index += 1;
        sink.write(frame('quote', quoteCourier(courier, request), index));
        next();
      }, this.delayOf(courier.code));
    };
    this.stops.add(stop);
    this.stats.open += 1;
    sink.onClose(() => stop(false));
    next();
  }

  /** Ends every open stream (shutdown). */
  closeAll(): void {
    for (const stop of [...this.stops]) stop(true);
  }

  private delayOf(courierCode: string): number {
    return QUOTE_DELAY_MS.min + Math.floor(draw(this.seed, `sse:${courierCode}`) * QUOTE_DELAY_MS.spread);
  }
}
