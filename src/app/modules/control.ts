import { controlHandlers, type SandboxModule } from '../../http/index.js';
import type { Services } from '../services.js';

/**
 * The control API's own operations (health, specs, scenarios, orders' state, clocks,
 * resets, clients). A client's reset also removes what each module keeps for it
 * (`modules`' reset hooks). Every app has it (see `createApp`).
 */
export function controlModule(services: Services, modules: readonly SandboxModule[]): SandboxModule {
  const resetParts = Object.fromEntries(modules.filter((m) => m.reset).map((m) => [m.name, m.reset!]));
  return { name: 'control', handlers: controlHandlers(services, resetParts) };
}
