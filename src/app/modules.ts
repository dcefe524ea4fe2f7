import { coverageModule, faultsModule, metricsModule, ratesModule, reportModule, requestsModule, retentionModule, preferModule, statesModule, webhooksModule } from './modules/index.js';
import { dashboardModule, docsModule, checkAdminOnly } from '../http/index.js';
import type { SandboxModule } from '../http/index.js';
import type { Services } from './services.js';

/**
 * Every module of the sandbox, in the order their interceptors wrap a request
 * (the first is outermost). Add a module here to plug it in.
 */
export function sandboxModules(services: Services): SandboxModule[] {
  const report = reportModule(services);
  const webhooks = webhooksModule(services, report.observer.attempts);
  // The webhook checks reach a listener endpoint through its listen session.
  report.checkThrough(webhooks.relay);
  // Faults first: they wrap everything, Prefer answers included.
  // The states module's teardown reads the list (its ordersRemoved hooks) when it runs.
  const modules: SandboxModule[] = [];
  modules.push(faultsModule(services), preferModule(services), requestsModule(services), coverageModule(services), ratesModule(services), webhooks, report, statesModule(services, report.observer, modules), metricsModule(services, { guard: (input) => checkAdminOnly(services.registry, input.headers.authorization as string | undefined) }), docsModule(), dashboardModule());
  // Last: its sweep (--retention) calls the prune hook of every module above.
  return [...modules, retentionModule(services, modules)];
}
