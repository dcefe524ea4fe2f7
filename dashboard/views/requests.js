import { useState } from '/dashboard/vendor/hooks.mjs';
import { call, query } from '../api.js';
import { ErrorBox, FilterInput, Json, Pager, time, usePoll } from '../components.js';
import { html } from '../html.js';

const PAGE_SIZE = 20;
/** The most entries one listing answers (its `limit`). */
const MOST = 1000;

/**
 * One page of the journal, newest first. The journal has no cursor: it answers the newest
 * `limit` entries that pass its filters, oldest first. A page past the first asks for as
 * many as it needs and keeps to the entries at or before `anchor` (the newest id when the
 * reader left the first page), so requests that arrive meanwhile do not shift the pages.
 * "Only spec violations" is not a filter of the API: the newest 1000 are filtered here.
 */
async function journalPage(filters, violationsOnly, page, anchor) {
  const wanted = (page + 1) * PAGE_SIZE;
  let limit = violationsOnly ? MOST : Math.min(MOST, wanted);
  for (;;) {
    const { body } = await call('GET', `/__sandbox/requests${query({ ...filters, limit })}`);
    const newestFirst = [...body.requests].reverse();
    const newer = anchor === null ? 0 : newestFirst.filter((r) => r.id > anchor).length;
    if (newer > 0 && !violationsOnly && limit < Math.min(MOST, wanted + newer)) {
      limit = Math.min(MOST, wanted + newer);
      continue;
    }
    const kept = newestFirst.filter((r) => (anchor === null || r.id <= anchor) && (!violationsOnly || r.violations.length > 0));
    const total = violationsOnly ? kept.length : Math.min(body.total - newer, MOST);
    return { total, size: body.size, newer, entries: kept.slice(page * PAGE_SIZE, wanted), hasNext: total > wanted };
  }
}

function Entry({ entry: r }) {
  return html`<li class=${r.violations.length > 0 ? 'violation' : ''}>
    <p><time datetime=${r.at}>${time(r.at)}</time> <strong>${r.method} <bdi>${r.path}</bdi></strong> → <span class="code">${r.status ?? 'no answer'}</span>
      <span class="muted"> ${r.operation_id} · ${Math.round(r.duration_ms)} ms${r.aborted ? ' · aborted' : ''}</span></p>
    ${r.violations.length > 0 && html`<details><summary><strong>${r.violations.length} spec ${r.violations.length === 1 ? 'violation' : 'violations'}</strong></summary>
      <ul>${r.violations.map((v) => html`<li><code>${v.field}</code>: <bdi>${v.message}</bdi></li>`)}</ul></details>`}
    <details><summary>Headers and body of request ${r.id}</summary>
      <h2 class="small">Headers</h2><${Json} value=${r.headers} />
      <h2 class="small">Body</h2><${Json} value=${r.body} />
    </details>
  </li>`;
}

/** The request journal, newest first, a page at a time, with spec violations highlighted. */
export function RequestsView() {
  const [filters, setFilters] = useState({ operation_id: '', status: '' });
  const [onlyViolations, setOnlyViolations] = useState(false);
  const [at, setAt] = useState({ page: 0, anchor: null });
  const journal = usePoll(() => journalPage(filters, onlyViolations, at.page, at.anchor), [JSON.stringify(filters), onlyViolations, at.page, at.anchor], 3000);
  const restart = () => setAt({ page: 0, anchor: null });
  const set = (name) => (value) => {
    setFilters({ ...filters, [name]: value });
    restart();
  };
  const data = journal.data;
  const next = () => setAt({ page: at.page + 1, anchor: at.anchor ?? data?.entries[0]?.id ?? null });
  const previous = () => (at.page === 1 ? restart() : setAt({ page: at.page - 1, anchor: at.anchor }));
  return html`<section>
    <h1>Requests</h1>
    <form class="filters" onSubmit=${(e) => e.preventDefault()}>
      <div><label for="r-op">Operation</label><${FilterInput} id="r-op" value=${filters.operation_id} onCommit=${set('operation_id')} placeholder="createOrder" /></div>
      <div><label for="r-status">Status</label><${FilterInput} id="r-status" type="number" min="100" max="599" value=${filters.status} onCommit=${set('status')} /></div>
      <div class="check"><input id="r-violations" type="checkbox" checked=${onlyViolations} onChange=${(e) => {
        setOnlyViolations(e.currentTarget.checked);
        restart();
      }} /><label for="r-violations">Only spec violations</label></div>
    </form>
    <${ErrorBox} error=${journal.error} />
    ${data && html`<p class="muted">${data.total} journaled${onlyViolations ? ' with spec violations' : ''} (at most ${data.size} kept), newest first${data.newer > 0 ? html`; ${data.newer} newer since this page: <a href="#/requests" onClick=${(e) => {
      e.preventDefault();
      restart();
    }}>show the newest</a>` : ''}</p>`}
    <ol class="journal">${data?.entries.map((r) => html`<${Entry} key=${r.id} entry=${r} />`)}</ol>
    <${Pager} label="Requests pages" page=${at.page} pages=${data ? Math.max(1, Math.ceil(data.total / PAGE_SIZE)) : 0} hasNext=${Boolean(data?.hasNext)} onPrevious=${previous} onNext=${next} />
  </section>`;
}
