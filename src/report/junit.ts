import type { Report } from './grade.js';

/**
 * Text as XML 1.0 character data: the five markup characters escaped, and the characters
 * XML cannot hold (C0 controls but tab and line ends, lone surrogates, U+FFFE and U+FFFF)
 * dropped, so a partner's run name cannot make its own CI report unreadable.
 */
export const escapeXml = (text: string): string =>
  text
    .replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!)
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '');

/**
 * The report as JUnit XML: one test case per catalogue item, so CI shows it like tests.
 * Not handled is a failure; not exercised and not graded are skipped.
 */
export function junitOf(report: Report): string {
  const { summary } = report;
  const failures = summary.not_handled;
  const skipped = summary.not_exercised + summary.not_graded;
  const suite = `readiness of ${report.client_id}${report.run ? ` (run ${report.run.name})` : ''}`;
  const cases = report.items.map((item) => {
    const open = `    <testcase classname="readiness.${escapeXml(item.id.split('.')[0]!)}" name="${escapeXml(`${item.id}: ${item.title}`)}" time="0">`;
    if (item.status === 'handled') return `${open}</testcase>`;
    if (item.status === 'not_handled') return `${open}\n      <failure message="${escapeXml(item.detail)}" type="not_handled">${escapeXml(`${item.detail}\nSource: ${item.source}`)}</failure>\n    </testcase>`;
    return `${open}\n      <skipped message="${escapeXml(item.status === 'not_graded' ? 'not graded: the sandbox cannot observe this' : item.detail)}"/>\n    </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="shipping-sandbox readiness" tests="${summary.items}" failures="${failures}" errors="0" skipped="${skipped}" time="0">`,
    `  <testsuite name="${escapeXml(suite)}" tests="${summary.items}" failures="${failures}" errors="0" skipped="${skipped}" time="0" timestamp="${report.generated_at}">`,
    '    <properties>',
    `      <property name="client_id" value="${escapeXml(report.client_id)}"/>`,
    `      <property name="handled_percent" value="${summary.handled_percent}"/>`,
    '    </properties>',
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
