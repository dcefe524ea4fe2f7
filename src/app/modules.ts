import { coverageModule } from './modules/coverage.js';
import { dashboardModule } from '../http/pages/dashboard.js';
import { docsModule } from '../http/pages/docs.js';
import { faultsModule } from './modules/faults.js';
import { checkAdminOnly } from '../http/roles.js';
import { metricsModule } from './modules/metrics.js';
import type { SandboxModule } from '../http/module.js';
import { assumedOrdersModule } from './modules/orders.js';
import { ratesModule } from './modules/rates.js';
import { reportModule } from './modules/report.js';
import { requestsModule } from './modules/requests.js';
import { retentionModule } from './modules/retention.js';
import type { Services } from './services.js';
import { preferModule } from './modules/prefer.js';
import { webhooksModule } from './modules/webhooks.js';

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
