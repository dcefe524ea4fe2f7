import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Suites that take seconds each and test durability, timing on the real clock, the
 * package and the README's commands rather than the API: they run in `npm run test:load`
 * (which .ci/run runs too), so that npm test stays under 5 minutes.
 */
export const SLOW = [
  'test/requests/large-bodies-embed.test.ts',
  'test/lifecycle/client-clocks.test.ts',
  'test/webhooks/shutdown.test.ts',
  'test/store/reports.test.ts',
  'test/unit/record-map.test.ts',
  'test/examples/client.test.ts',
  'test/store/postgres-helper.test.ts',
  'test/faults/actions.test.ts',
  'test/bench/alloc-probe.test.ts',
  'test/ship/pack.test.ts',
  'test/ship/docs-assets.test.ts',
  'test/store/close.test.ts',
  'test/store/persistence.test.ts',
  'test/store/lock.test.ts',
  'test/store/segments.test.ts',
  'test/store/loading.test.ts',
  'test/store/write-failures.test.ts',
  'test/webhooks/fairness.test.ts',
  'test/lifecycle/advance-responsive.test.ts',
  'test/webhooks/volume.test.ts',
  'test/lifecycle/real-clock.test.ts',
  'test/readme/quick-start.test.ts',
  // A trigger behind a client's backlog of slow webhooks, and one whose first attempt outlasts the answer's 25 s: ~40 s.
  'test/states/trigger-backlog.test.ts',
  // The readiness report's judging of every catalogue item (~17 s) and the listen sessions
  // (~12 s): npm test on Node 20 had come to 289 s of its 300. `npm run test:postgres` runs
  // both on PostgreSQL too.
  'test/report/judging.test.ts',
  'test/webhooks/listen.test.ts',
  // The CLI's signals, a start stopped while its 30 MB journal replays among them: ~20 s.
  'test/lifecycle/signals.test.ts',
  // The readiness recipe through the real CLI, several clients and webhooks: ~15 s of test time.
  'test/examples/careful-client.test.ts',
  // Each starts the real CLI with --spec (twice, for the seeded answers): ~24 s of test time.
  'test/prefer/prism-extra-operation.test.ts',
  'test/provider/spec-fallback.test.ts',
  // The PostgreSQL adapter's own tests beyond the contract suite, each on a server of its
  // own: ~31 s of test time (npm test keeps one end-to-end test there; the contract suite on
  // PostgreSQL, 57 s on its own, runs in `npm run test:postgres`: in npm test it brought the
  // run to 296 s of its 300 on a quiet 2-core machine).
  'test/store/postgres-counters.test.ts',
  'test/store/postgres-clocks.test.ts',
  'test/store/postgres-ids.test.ts',
  'test/store/postgres-point-reads.test.ts',
  'test/store/postgres-listings.test.ts',
  // advance-all's answer on both stores and both clocks, starting a PostgreSQL: ~15 s.
  'test/store/advance-all-now.test.ts',
  // ~11 s of test time between them (a due heap of a million entries, partners' isolation
  // over many clients, rate streams to their end): npm test keeps its margin under 5 minutes.
  'test/unit/due-heap.test.ts',
  'test/isolation/clients.test.ts',
  'test/provider/stream.test.ts',
  // The report's marks past their cap over many requests: ~3.5 s (npm test on Node 20 came to 264 s).
  'test/unit/report-marks.test.ts',
  // ~11 s of test time between them (a sandbox with a webhook to a client no longer configured,
  // the seed script on a PostgreSQL of its own, the report's marks stored before each answer on
  // both stores): npm test on Node 20 came to 331 s on a machine busy with a review's test run.
  'test/webhooks/unknown-client.test.ts',
  'test/store/postgres-seed.test.ts',
  'test/report/answer-marks.test.ts',
  // Each starts the real CLI on a data file two to four times in a row: ~60 s of test time
  // between them (npm test on Node 20 came to 306 s in CI). `npm run test:postgres` runs both
  // on PostgreSQL too (what is the embedded store's alone skips there).
  'test/lifecycle/clock-start-passed.test.ts',
  'test/lifecycle/generated-token.test.ts',
  // Fair turns under floods of requests and stalled answers: suites of the API grown past
  // 15 s (~42 s of test time between them, timed on the real clock), which DESIGN's "CI time"
  // sends here. `npm run test:postgres` runs both on PostgreSQL too.
  'test/isolation/turns.test.ts',
  'test/isolation/stalled-answers.test.ts',
  // The banner's and the start's warnings of --webhook-targets, five starts of the real CLI:
  // ~24 s of test time (npm test on Node 20 came to 295 s on a quiet 2-core machine).
  'test/webhooks/target-policy-cli.test.ts',
];

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The end-to-end suites (the real CLI, kill -9, a full disk, a second instance, replicas on PostgreSQL) and the
    // fuzzers run in \`npm run test:load\`, which .ci/run also runs: npm test stays under 5 minutes.
    // The browser tests (the dashboard, the /docs page) too, as DESIGN's "Test time" says.
    exclude: ['test/store/postgres.contract.test.ts', 'test/store/postgres-signals.test.ts', 'test/e2e/**', 'test/replicas/**', 'test/fuzz/**', 'test/dashboard/dashboard.test.ts', 'test/dashboard/real-data.test.ts', 'test/dashboard/polling.test.ts', 'test/dashboard/new-order.test.ts', 'test/dashboard/notices.test.ts', 'test/ship/docs-page.test.ts', 'node_modules/**', ...SLOW],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Vitest's default of one worker per core but one left one worker on a 2-core machine;
    // these suites wait on sockets and timers more than they compute, and two workers run
    // them in 115-148 s instead of 256 s there (the timing-sensitive ones are in SLOW).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
