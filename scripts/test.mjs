#!/usr/bin/env node
// Runs the test suite with vitest and ends with one line "N passed, N failed, N skipped",
// the closing line CI reads. Extra arguments go to vitest (e.g. a file filter). The JSON report
// goes to .vitest-results.json, or to the file TEST_REPORT names (.ci/run gives each Node line's
// pass a report of its own).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';

const report = process.env.TEST_REPORT || '.vitest-results.json';
rmSync(report, { force: true });
const run = spawnSync(
  'npx',
  ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)],
  { stdio: 'inherit' },
);
if (!existsSync(report)) {
  console.log('0 passed, 1 failed');
  process.exit(run.status || 1);
}
const results = JSON.parse(readFileSync(report, 'utf8'));
const skipped = results.numPendingTests + results.numTodoTests;
const failed = results.numFailedTests + (results.numFailedTestSuites > 0 && results.numFailedTests === 0 ? results.numFailedTestSuites : 0);
console.log(`${results.numPassedTests} passed, ${failed} failed, ${skipped} skipped`);
process.exit(run.status ?? 1);
