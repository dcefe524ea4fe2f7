import { domainMessages, Forbidden } from '../shared/index.js';
import type { Client } from './registry.js';

/** Throws Forbidden naming `field` when the client may not use this courier. */
export function assertCourierEnabled(client: Client, courierCode: string, field: string): void {
  if (client.couriers && !client.couriers.includes(courierCode)) {
    throw new Forbidden(domainMessages.courierNotEnabled(courierCode), [{ field, message: 'not enabled for this client' }]);
  }
}
