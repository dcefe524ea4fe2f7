/** Who may call: the registry of tokens and clients, their roles, and the couriers a client may use. */

export { assertCourierEnabled } from './couriers.js';
export { ClientRegistry, ROLES, roleOf } from './registry.js';
export type { Caller, Client, ClientConfig, Role } from './registry.js';
