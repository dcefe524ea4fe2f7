import type { SandboxModule } from '../../http/index.js';
import type { Services } from '../services.js';
import { coverageHandlers } from '../../http/index.js';

/** Provinces, cities, districts and area search from fixtures/coverage.json. */
export function coverageModule({ fixtures }: Services): SandboxModule {
  return { name: 'coverage', handlers: coverageHandlers(fixtures) };
}
