import type { SandboxModule } from '../../http/index.js';
import type { Services } from '../services.js';
import { rateHandlers, ShippingFeeStream, type StreamStats } from '../../http/index.js';

/** The rates module, with what its SSE stream is doing (tests read `streams`). */
export interface RatesModule extends SandboxModule {
  streams: StreamStats;
}

/** Couriers, shipping fee (JSON and SSE) and estimation rates. */
export function ratesModule({ fixtures, ids }: Services): RatesModule {
  const stream = new ShippingFeeStream(fixtures, ids.seed);
  return {
    name: 'rates',
    handlers: { ...rateHandlers(fixtures), streamShippingFee: stream.handler },
    streams: stream.stats,
    close: () => stream.closeAll(),
  };
}
