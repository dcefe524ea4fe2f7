import type { Report } from './grade.js';
import { lastEvents } from '../records/index.js';

/**
 * Text as XML 1.0 character data: the five markup characters escaped, and the characters
 * XML cannot hold (C0 controls but tab and line ends, lone surrogates, U+FFFE and U+FFFF)
 * dropped, so a partner's run name cannot make its own CI report unreadable.
 */
export const escapeXml = (text: string): string =>
  text
    .replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!)
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '');

/** The coverage as test cases: one per documented status of each operation; not exercised is skipped. */
function coverageCases(report: Report): string[] {
  return report.coverage.operations.flatMap((op) =>
    op.statuses
      .filter((s) => s.documented)
      .map((s) => {
        const open = `    <testcase classname="coverage.${escapeXml(op.operation_id)}" name="${escapeXml(`${op.method} ${op.path} → ${s.status}`)}" time="0">`;
        return s.exercised > 0 ? `${open}</testcase>` : `${open}\n      <skipped message="not exercised"/>\n    </testcase>`;
      }),
  );
}

/** What a CI log shows under a failed item: its detail, the last requests or attempts behind it (see lastEvents), and where the behaviour comes from. */
function failureText(report: Report, item: Report['items'][number]): string {
  const last = lastEvents(report.events, item.id);
  const lines = last.events.map((e) => `- ${new Date(e.at).toISOString()} ${e.note}`);
  return [item.detail, ...(lines.length > 0 ? [last.heading, ...lines] : []), `Source: ${item.source}`].join('\n');
}

/**
 * The report as JUnit XML, so CI shows it like tests: one suite with a test case per
 * catalogue item (not handled is a failure; not exercised and not graded are skipped),
 * and one with a test case per documented status of each provider operation (not
 * exercised is skipped: coverage fails a build through `--coverage-under`, not here).
 */
export function junitOf(report: Report): string {
  const { summary, coverage } = report;
  const failures = summary.not_handled;
  const skipped = summary.not_exercised + summary.not_graded;
  const coverageSkipped = coverage.summary.statuses - coverage.summary.statuses_exercised;
  const suite = `readiness of ${report.client_id}${report.run ? ` (run ${report.run.name})` : ''}`;
  const cases = report.items.map((item) => {
    const open = `    <testcase classname="readiness.${escapeXml(item.id.split('.')[0]!)}" name="${escapeXml(`${item.id}: ${item.title}`)}" time="0">`;
    if (item.status === 'handled') return `${open}</testcase>`;
    if (item.status === 'not_handled') return `${open}\n      <failure message="${escapeXml(item.detail)}" type="not_handled">${escapeXml(failureText(report, item))}</failure>\n    </testcase>`;
    return `${open}\n      <skipped message="${escapeXml(item.status === 'not_graded' ? 'not graded: the sandbox cannot observe this' : `${item.detail} (counts as not handled in handled_percent)`)}"/>\n    </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="shipping-sandbox readiness" tests="${summary.items + coverage.summary.statuses}" failures="${failures}" errors="0" skipped="${skipped + coverageSkipped}" time="0">`,
    `  <testsuite name="${escapeXml(suite)}" tests="${summary.items}" failures="${failures}" errors="0" skipped="${skipped}" time="0" timestamp="${report.generated_at}">`,
    '    <properties>',
    `      <property name="client_id" value="${escapeXml(report.client_id)}"/>`,
    `      <property name="handled_percent" value="${summary.handled_percent}"/>`,
    '    </properties>',
    ...cases,
    '  </testsuite>',
    `  <testsuite name="${escapeXml(`coverage of ${report.client_id}`)}" tests="${coverage.summary.statuses}" failures="0" errors="0" skipped="${coverageSkipped}" time="0" timestamp="${report.generated_at}">`,
    '    <properties>',
    `      <property name="coverage_percent" value="${coverage.summary.percent}"/>`,
    '    </properties>',
    ...coverageCases(report),
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
