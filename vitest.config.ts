import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The end-to-end suites (the real CLI, kill -9, a full disk, a second instance, replicas on PostgreSQL) and the
    // fuzzers run in \`npm run test:load\`, which .ci/run also runs: npm test stays under 5 minutes.
    // The browser tests (the dashboard, the /docs page) too, as DESIGN's "Test time" says.
    exclude: ['test/e2e/**', 'test/replicas/**', 'test/fuzz/**', 'test/dashboard/dashboard.test.ts', 'test/ship/docs-page.test.ts', 'node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
