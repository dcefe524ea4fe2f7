import { useState } from '/dashboard/vendor/hooks.mjs';
import { call, mayWrite } from '../api.js';
import { ErrorBox, Result, useAction, usePoll } from '../components.js';
import { html } from '../html.js';

const LABELS = { handled: 'Handled', not_handled: 'Not handled', not_exercised: 'Not exercised', not_graded: 'Not graded' };

/** One operation's statuses as text: each with how often the run was answered with it. */
const statusesText = (op) => op.statuses.map((s) => `${s.status}${s.documented ? '' : ' (undocumented)'}: ${s.exercised > 0 ? `${s.exercised}×` : 'not exercised'}`).join(', ');

/** How many of an item's last events are shown, as the CLI and the JUnit report show them. */
const SHOWN_EVENTS = 3;

/**
 * Under a not-handled item: the last requests or attempts that missed it, newest last, or,
 * with no miss recorded (a refusal not followed up yet), the last that exercised it: what
 * the client did, not only how often (lastEvents of the report command and JUnit report).
 */
function lastEvents(events, item) {
  if (item.status !== 'not_handled') return '';
  const mine = events.filter((e) => e.item === item.id);
  const missed = mine.filter((e) => e.outcome === 'missed');
  const last = (missed.length > 0 ? missed : mine.filter((e) => e.outcome === 'exercised')).slice(-SHOWN_EVENTS);
  if (last.length === 0) return '';
  return html`<p class="muted">${missed.length > 0 ? 'Last missed:' : 'Last exercised (no handling seen after it):'}</p>
    <ul class="misses">
      ${last.map((e) => html`<li><time datetime=${new Date(e.at).toISOString()}>${new Date(e.at).toISOString()}</time> ${e.note}</li>`)}
    </ul>`;
}

/**
 * The readiness report of the caller (GET /__sandbox/report): each catalogue item graded,
 * the coverage of the provider's operations and their statuses, a named run, the checks.
 */
export function ReportView() {
  const report = usePoll(async () => (await call('GET', '/__sandbox/report')).body, [], 5000);
  const action = useAction();
  const [name, setName] = useState('');
  const startRun = (event) => {
    event.preventDefault();
    action.run(async () => {
      await call('POST', '/__sandbox/runs', { body: { name } });
      report.reload();
      return `Run "${name}" started: the report is empty again.`;
    });
  };
  // The checks send to a URL: the endpoints with one, enabled (the default endpoint is offered whatever it has, and says why it cannot be graded).
  const endpoints = usePoll(async () => (await call('GET', '/__sandbox/webhooks/endpoints')).body.endpoints, [], 10_000);
  const gradable = (endpoints.data ?? []).filter((e) => e.id !== 'default' && e.url && e.enabled && (e.events === null || e.events.includes('awb.generated')));
  const [chosen, setEndpointId] = useState('default');
  // An endpoint deleted, disabled or changed since it was chosen is not offered any more: the default one is graded then.
  const endpointId = chosen === 'default' || gradable.some((e) => e.id === chosen) ? chosen : 'default';
  const runChecks = () =>
    action.run(async () => {
      // Five steps, each up to the webhook timeout (10 s by default).
      const { body } = await call('POST', `/__sandbox/checks${endpointId === 'default' ? '' : `?endpoint_id=${encodeURIComponent(endpointId)}`}`, { timeoutMs: 120_000 });
      report.reload();
      return `Checks run against endpoint ${body.endpoint_id}: see the check.* items below.`;
    });
  const r = report.data;
  return html`<section>
    <h1>Readiness</h1>
    <${ErrorBox} error=${report.error} />
    ${r &&
    html`<p class="summary">
      <strong>${r.summary.handled_percent}% handled</strong>
      ${` (${r.summary.handled} of ${r.summary.graded} graded items; ${r.summary.not_handled} not handled, ${r.summary.not_exercised} not exercised)`}
      ${r.run ? html` — run <q>${r.run.name}</q>` : ''}
    </p>`}
    ${mayWrite() && html`<div class="actions">
      <label for="check-endpoint">Endpoint to check</label>
      <select id="check-endpoint" value=${endpointId} onChange=${(e) => setEndpointId(e.currentTarget.value)}>
        <option value="default">default</option>
        ${gradable.map((e) => html`<option value=${e.id}>${e.id} (${e.url})</option>`)}
      </select>
      <button type="button" disabled=${action.busy} onClick=${runChecks}>Run checks</button>
    </div>
    <form class="inline-form" onSubmit=${startRun}>
      <label for="run-name">Run name</label>
      <input id="run-name" required value=${name} onInput=${(e) => setName(e.currentTarget.value)} />
      <button type="submit" disabled=${action.busy}>Start run</button>
    </form>`}
    <${Result} result=${action.result} />
    ${r &&
    html`<div class="scroll"><table class="report wrap">
      <caption>Catalogue items</caption>
      <thead><tr><th scope="col">Item</th><th scope="col">Status</th><th scope="col">Why</th></tr></thead>
      <tbody>
        ${r.items.map((item) => html`<tr class=${`status-${item.status}`}>
          <th scope="row">${item.title}${item.sandbox_choice ? html` <span class="muted">(sandbox choice)</span>` : ''}</th>
          <td>${LABELS[item.status] ?? item.status}</td>
          <td>${item.detail}${lastEvents(r.events ?? [], item)}</td>
        </tr>`)}
      </tbody>
    </table></div>`}
    ${r &&
    html`<p class="summary coverage">
      <strong>${r.coverage.summary.percent}% coverage</strong>
      ${` (${r.coverage.summary.statuses_exercised} of ${r.coverage.summary.statuses} documented statuses; ${r.coverage.summary.operations_exercised} of ${r.coverage.summary.operations} operations exercised)`}
    </p>
    <div class="scroll"><table class="report wrap">
      <caption>Provider operations</caption>
      <thead><tr><th scope="col">Operation</th><th scope="col">Requests</th><th scope="col">Statuses</th></tr></thead>
      <tbody>
        ${r.coverage.operations.map((op) => html`<tr class=${op.exercised > 0 ? 'status-handled' : 'status-not_exercised'}>
          <th scope="row"><code>${op.method} ${op.path}</code> <span class="muted">${op.operation_id}</span></th>
          <td>${op.exercised}</td>
          <td>${statusesText(op)}</td>
        </tr>`)}
      </tbody>
    </table></div>`}
  </section>`;
}
