import type { Report } from './grade.js';
import { lastEvents } from '../records/index.js';

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const LABELS: Record<string, string> = { handled: 'handled', not_handled: 'not handled', not_exercised: 'not exercised', not_graded: 'not graded' };

/** The coverage table: one row per provider operation, its documented statuses with how often each was answered. */
function coverageRows(report: Report): string {
  return report.coverage.operations
    .map((op) => {
      const statuses = op.statuses.map((s) => `<span class="${s.exercised > 0 ? 'hit' : 'miss'}">${s.status}${s.documented ? '' : ' (undocumented)'}: ${s.exercised > 0 ? `${s.exercised}×` : 'not exercised'}</span>`).join(', ');
      return `<tr class="${op.exercised > 0 ? 'handled' : 'not_exercised'}"><td><code>${escapeHtml(op.operation_id)}</code></td><td><code>${escapeHtml(`${op.method} ${op.path}`)}</code></td><td>${op.exercised}</td><td>${statuses}</td></tr>`;
    })
    .join('\n');
}

/** Under a not-handled item's detail: the last requests or attempts behind it, as the JUnit report names them. */
function whyNot(report: Report, item: Report['items'][number]): string {
  if (item.status !== 'not_handled') return '';
  const { heading, events } = lastEvents(report.events, item.id);
  if (events.length === 0) return '';
  const lines = events.map((e) => `<li><small>${escapeHtml(new Date(e.at).toISOString())}</small> ${escapeHtml(e.note)}</li>`).join('');
  return `<br><small>${heading}</small><ul>${lines}</ul>`;
}

/**
 * The report as one self-contained page: inline style, no script, no external
 * resource; every text that came from the client (run name, answers) is escaped.
 */
export function htmlOf(report: Report): string {
  const { summary } = report;
  const coverage = report.coverage.summary;
  const rows = report.items
    .map((i) => `<tr class="${i.status}"><td><code>${escapeHtml(i.id)}</code></td><td>${escapeHtml(i.title)}${i.sandbox_choice ? ' <small>(sandbox choice)</small>' : ''}</td><td>${LABELS[i.status]}</td><td>${escapeHtml(i.detail)}${whyNot(report, i)}</td><td><small>${escapeHtml(i.source)}</small></td></tr>`)
    .join('\n');
  const checks = report.checks.map((c) => `<li><code>${escapeHtml(c.id)}</code>${c.endpoint_id === undefined ? '' : ` at <code>${escapeHtml(c.endpoint_id)}</code>`}: ${escapeHtml(c.status)} (expected ${escapeHtml(c.expected)}, got ${escapeHtml(c.got ?? 'nothing')})</li>`).join('\n');
  const run = report.run ? `run <strong>${escapeHtml(report.run.name)}</strong> since ${escapeHtml(report.run.started_at)}` : 'since the last reset';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Readiness report: ${escapeHtml(report.client_id)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2rem;color:#222}table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;padding:.3rem .5rem;text-align:left;vertical-align:top}
span.hit{color:#176b2c}span.miss{color:#777}tr.handled td:nth-child(3){color:#176b2c}tr.not_handled td:nth-child(3){color:#a4161a;font-weight:bold}tr.not_exercised td:nth-child(3),tr.not_graded td:nth-child(3){color:#777}
</style></head><body>
<h1>Readiness report: ${escapeHtml(report.client_id)}</h1>
<p>${run}; generated ${escapeHtml(report.generated_at)}.</p>
<p><strong>${summary.handled_percent}%</strong> handled: ${summary.handled} of ${summary.graded} graded items (${summary.not_handled} not handled, ${summary.not_exercised} not exercised; ${summary.not_graded} not graded).</p>
<table><thead><tr><th>Item</th><th>Behaviour</th><th>Status</th><th>Why</th><th>Provider interface</th></tr></thead><tbody>
${rows}
</tbody></table>
<h2>Coverage of the provider's operations</h2>
<p><strong>${coverage.percent}%</strong> of documented statuses exercised: ${coverage.statuses_exercised} of ${coverage.statuses} (${coverage.operations_exercised} of ${coverage.operations} operations).</p>
<table><thead><tr><th>Operation</th><th>Request</th><th>Requests</th><th>Statuses answered</th></tr></thead><tbody>
${coverageRows(report)}
</tbody></table>
<h2>Checks</h2>
${checks ? `<ul>${checks}</ul>` : '<p>Not run: <code>POST /__sandbox/checks</code> runs them.</p>'}
</body></html>
`;
}
