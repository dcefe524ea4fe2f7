import { defineConfig } from 'vitest/config';
import { SLOW } from '../../vitest.config.js';

// `npm run test:load`: the slow suites, kept out of `npm test`: the bounded load tests (their
// files end in .load.ts), the end-to-end suites on the real CLI (test/e2e), the replicas on one
// PostgreSQL (test/replicas), the fuzzers and the browser tests (the dashboard, /docs).
export default defineConfig({
  test: {
    include: ['test/load/**/*.load.ts', 'test/e2e/**/*.test.ts', 'test/replicas/**/*.test.ts', 'test/fuzz/**/*.test.ts', 'test/dashboard/dashboard.test.ts', 'test/dashboard/real-data.test.ts', 'test/dashboard/polling.test.ts', 'test/dashboard/new-order.test.ts', 'test/dashboard/notices.test.ts', 'test/ship/docs-page.test.ts', ...SLOW],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
