#!/usr/bin/env node
// The end of a CI run: names every failed test of the vitest JSON reports (a CI log is often
// read only from its tail), the wall time of each step, then the closing line
// "N passed, N failed, N skipped" counting them all. Arguments: the container test's result
// (passed, failed or skipped), the soak's exit code, and the file of step timings
// ("name<TAB>seconds<TAB>exit" per line).
import { existsSync, readFileSync } from 'node:fs';

const [container, soak, timings] = process.argv.slice(2);
// npm test runs once on the machine's Node and once on each supported LTS line (.ci/run).
const reports = [
  '.vitest-results.json',
  '.vitest-results-node24.json',
  '.vitest-results-node26.json',
  '.vitest-load-results.json',
  '.vitest-postgres-results.json',
];
/** How a failure line names the pass it comes from. */
const passOf = (file) => /-node(\d+)\./.exec(file)?.[1];
let passed = 0;
let failed = 0;
let skipped = 0;
const failures = [];
for (const file of reports) {
  if (!existsSync(file)) {
    failed += 1;
    failures.push(`${file}: no report (the suite did not run to its end)`);
    continue;
  }
  const report = JSON.parse(readFileSync(file, 'utf8'));
  passed += report.numPassedTests;
  failed += report.numFailedTests + (report.numFailedTests === 0 ? report.numFailedTestSuites : 0);
  skipped += report.numPendingTests + report.numTodoTests;
  for (const suite of report.testResults) {
    const node = passOf(file);
    const name = `${node ? `[node ${node}] ` : ''}${suite.name.replace(`${process.cwd()}/`, '')}`;
    const failedTests = suite.assertionResults.filter((test) => test.status === 'failed');
    for (const test of failedTests) failures.push(`${name} > ${test.fullName}: ${(test.failureMessages[0] ?? '').split('\n')[0]}`);
    if (suite.status === 'failed' && failedTests.length === 0) failures.push(`${name}: ${(suite.message ?? 'failed').split('\n')[0]}`);
  }
}
if (container === 'passed') passed += 1;
else if (container === 'failed') {
  failed += 1;
  failures.push('the container test');
} else skipped += 1;
if (soak === '0') passed += 1;
else {
  failed += 1;
  failures.push('the soak');
}
if (timings && existsSync(timings)) {
  console.log('\nsteps (wall time):');
  for (const line of readFileSync(timings, 'utf8').trim().split('\n')) {
    const [step, seconds, code] = line.split('\t');
    console.log(`  ${seconds.padStart(6)} s  ${step}${code === '0' ? '' : `  (exit ${code})`}`);
  }
}
if (failures.length > 0) {
  console.log('\nfailed:');
  for (const failure of failures) console.log(`  ${failure}`);
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
// A failed test fails the run even when its runner exited 0 (vitest did once, with a test timed out on PostgreSQL).
process.exitCode = failed > 0 ? 1 : 0;
