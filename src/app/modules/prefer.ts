import { preferInterceptor, providerChecks } from '../../http/index.js';
import type { SandboxModule } from '../../http/index.js';
import type { Services } from '../services.js';

/** The `Prefer` module: errors and examples on demand on every provider operation, for requests their operation would take. */
export function preferModule(services: Pick<Services, 'specs' | 'options' | 'orders' | 'fixtures'>): SandboxModule {
  return { name: 'prefer', providerInterceptors: [preferInterceptor(services.specs.provider.document, services.options.seed, providerChecks(services))] };
}
