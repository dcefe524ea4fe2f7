/** The composition: builds the services (`buildServices`), the modules and the express app (`createApp`), and starts a sandbox (`createSandbox`). */

export { createApp } from './app.js';
export { buildServices, createSandbox } from './sandbox.js';
export type { Sandbox, StartOptions } from './sandbox.js';
export type { SandboxClock } from './in-process-clock.js';
