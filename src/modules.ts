import type { SandboxModule } from './module.js';
import type { Services } from './services.js';

/**
 * Every module of the sandbox, in the order their interceptors wrap a request
 * (the first is outermost). Add a module here to plug it in.
 */
export function sandboxModules(_services: Services): SandboxModule[] {
  return [];
}
