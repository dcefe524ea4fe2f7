/**
 * Shipping Order Sandbox, in-process.
 *
 * @example
 * import { createSandbox } from 'shipping-sandbox';
 * const sandbox = await createSandbox({ clock: 'manual', tokens: ['test-token'] });
 * // ... point your client at sandbox.url ...
 * await sandbox.close();
 */
export { createSandbox, buildServices, type Sandbox, type SandboxClock, type StartOptions } from './app/index.js';
export { createApp } from './app/index.js';
export type { SandboxOptions } from './config/index.js';
export type { ClientConfig, Role } from './clients/index.js';
