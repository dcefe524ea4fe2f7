import { useState } from '/dashboard/vendor/hooks.mjs';
import { call, query } from '../api.js';
import { ErrorBox, Json, time, usePoll } from '../components.js';
import { html } from '../html.js';

/** The request journal, newest first, with spec violations highlighted. */
export function RequestsView() {
  const [filters, setFilters] = useState({ operation_id: '', status: '' });
  const [onlyViolations, setOnlyViolations] = useState(false);
  const journal = usePoll(async () => (await call('GET', `/__sandbox/requests${query(filters)}`)).body, [JSON.stringify(filters)], 3000);
  const set = (name) => (event) => setFilters({ ...filters, [name]: event.currentTarget.value.trim() });
  const entries = [...(journal.data?.requests ?? [])].reverse().filter((r) => !onlyViolations || r.violations.length > 0);
  return html`<section>
    <h1>Requests</h1>
    <form class="filters" onSubmit=${(e) => e.preventDefault()}>
      <div><label for="r-op">Operation</label><input id="r-op" value=${filters.operation_id} onChange=${set('operation_id')} placeholder="createOrder" /></div>
      <div><label for="r-status">Status</label><input id="r-status" type="number" min="100" max="599" value=${filters.status} onChange=${set('status')} /></div>
      <div class="check"><input id="r-violations" type="checkbox" checked=${onlyViolations} onChange=${(e) => setOnlyViolations(e.currentTarget.checked)} /><label for="r-violations">Only spec violations</label></div>
    </form>
    <${ErrorBox} error=${journal.error} />
    ${journal.data && html`<p class="muted">${journal.data.total} journaled (at most ${journal.data.size} kept), newest first</p>`}
    <ol class="journal">${entries.map((r) => html`<li key=${r.id} class=${r.violations.length > 0 ? 'violation' : ''}>
      <p><time datetime=${r.at}>${time(r.at)}</time> <strong>${r.method} ${r.path}</strong> → <span class="code">${r.status ?? 'no answer'}</span>
        <span class="muted"> ${r.operation_id} · ${Math.round(r.duration_ms)} ms${r.aborted ? ' · aborted' : ''}</span></p>
      ${r.violations.length > 0 && html`<div><strong>Spec violations</strong><ul>${r.violations.map((v) => html`<li><code>${v.field}</code>: ${v.message}</li>`)}</ul></div>`}
      <details><summary>Headers and body of request ${r.id}</summary>
        <h2 class="small">Headers</h2><${Json} value=${r.headers} />
        <h2 class="small">Body</h2><${Json} value=${r.body} />
      </details>
    </li>`)}</ol>
  </section>`;
}
