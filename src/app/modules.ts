import { coverageModule } from './modules/index.js';
import { dashboardModule } from '../http/index.js';
import { docsModule } from '../http/index.js';
import { faultsModule } from './modules/index.js';
import { checkAdminOnly } from '../http/index.js';
import { metricsModule } from './modules/index.js';
import type { SandboxModule } from '../http/index.js';
import { ratesModule } from './modules/index.js';
import { reportModule } from './modules/index.js';
import { requestsModule } from './modules/index.js';
import { retentionModule } from './modules/index.js';
import type { Services } from './services.js';
import { preferModule } from './modules/index.js';
import { webhooksModule } from './modules/index.js';

/**
 * Every module of the sandbox, in the order their interceptors wrap a request
 * (the first is outermost). Add a module here to plug it in.
 */
export function sandboxModules(services: Services): SandboxModule[] {
  const report = reportModule(services);
  // Faults first: they wrap everything, Prefer answers included.
  const modules: SandboxModule[] = [faultsModule(services), preferModule(services), requestsModule(services), coverageModule(services), ratesModule(services), webhooksModule(services, report.observer.attempts), report, metricsModule(services, { guard: (input) => checkAdminOnly(services.registry, input.headers.authorization as string | undefined) }), docsModule(), dashboardModule()];
  // Last: its sweep (--retention) calls the prune hook of every module above.
  return [...modules, retentionModule(services, modules)];
}
