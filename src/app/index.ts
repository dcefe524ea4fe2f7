export { createApp } from './app.js';
export { buildServices, createSandbox } from './sandbox.js';
export type { Sandbox, SandboxClock } from './sandbox.js';
