import { assumedOrderHandlers, orderHandlers, type SandboxModule } from '../../http/index.js';
import type { Services } from '../services.js';

/**
 * Orders: create and track (documented by the provider), cancel and detail (named by
 * it, shaped by the sandbox). Every app has it (see `createApp`).
 */
export function ordersModule(services: Pick<Services, 'storage' | 'orders' | 'fixtures' | 'journey' | 'clock' | 'events' | 'ids' | 'tracking'>): SandboxModule {
  return { name: 'orders', handlers: { ...orderHandlers(services), ...assumedOrderHandlers(services) } };
}
