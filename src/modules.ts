import { coverageModule } from './coverage/module.js';
import { dashboardModule } from './dashboard/module.js';
import { docsModule } from './docs/module.js';
import { faultsModule } from './faults/module.js';
import { checkAdminOnly } from './http/roles.js';
import { metricsModule } from './metrics/module.js';
import type { SandboxModule } from './module.js';
import { assumedOrdersModule } from './orders/assumed-handlers.js';
import { ratesModule } from './rates/module.js';
import { reportModule } from './report/module.js';
import { requestsModule } from './requests/module.js';
import { retentionModule } from './retention/module.js';
import type { Services } from './services.js';
import { preferModule } from './spec/prefer.js';
import { webhooksModule } from './webhooks/module.js';

/**
 * Every module of the sandbox, in the order their interceptors wrap a request
 * (the first is outermost). Add a module here to plug it in.
 */
export function sandboxModules(services: Services): SandboxModule[] {
  const report = reportModule(services);
  // Faults first: they wrap everything, Prefer answers included.
  const modules: SandboxModule[] = [faultsModule(services), preferModule(services), requestsModule(services), coverageModule(services), ratesModule(services), assumedOrdersModule(services), webhooksModule(services, report.observer.attempts), report, metricsModule(services, { guard: (input) => checkAdminOnly(services.registry, input.headers.authorization as string | undefined) }), docsModule(), dashboardModule()];
  // Last: its sweep (--retention) calls the prune hook of every module above.
  return [...modules, retentionModule(services, modules)];
}
