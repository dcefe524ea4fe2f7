export { assertCourierEnabled } from './couriers.js';
export { ClientRegistry, ROLES, roleOf } from './registry.js';
export type { Caller, Client, ClientConfig, Role } from './registry.js';
