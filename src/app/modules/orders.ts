import { assumedOrderHandlers } from '../../http/index.js';
import type { SandboxModule } from '../../http/index.js';
import type { Services } from '../services.js';

/** Cancel and detail: the order operations the provider names but does not document. */
export function assumedOrdersModule(services: Pick<Services, 'storage' | 'orders' | 'fixtures' | 'journey' | 'clock' | 'events' | 'ids'>): SandboxModule {
  return { name: 'order-more', handlers: assumedOrderHandlers(services) };
}
