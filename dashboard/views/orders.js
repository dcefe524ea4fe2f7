import { useState } from '/dashboard/vendor/hooks.mjs';
import { call, query } from '../api.js';
import { awbPending, ErrorBox, FilterInput, Pager, time, usePoll } from '../components.js';
import { html } from '../html.js';

export const STATUSES = ['created', 'awb_generated', 'awb_failed', 'picked_up', 'in_transit', 'delivery_failed', 'delivered', 'returned', 'cancelled'];
const PAGE_SIZE = 20;

/** A status with a place to break after each underscore (`delivery_<wbr>failed`): on a phone its pill may take two lines. */
const breakable = (status) => status.split('_').flatMap((part, i) => (i === 0 ? [part] : [html`_<wbr />`, part]));

/** The client's orders, newest first, a page at a time; filtered, searched, polled for live updates. */
export function OrdersView() {
  const [filters, setFilters] = useState({ status: '', scenario: '', courier_code: '', q: '' });
  const [search, setSearch] = useState('');
  const [cursors, setCursors] = useState([null]); // the cursor of each page shown so far
  const cursor = cursors[cursors.length - 1];
  const scenarios = usePoll(async () => (await call('GET', '/__sandbox/scenarios')).body, [], 60_000);
  const orders = usePoll(async () => (await call('GET', `/__sandbox/orders${query({ ...filters, limit: PAGE_SIZE, cursor })}`)).body, [JSON.stringify(filters), cursor]);
  const setValue = (name) => (value) => {
    setFilters({ ...filters, [name]: value });
    setCursors([null]);
  };
  const set = (name) => (event) => setValue(name)(event.currentTarget.value);
  const submitSearch = (event) => {
    event.preventDefault();
    setFilters({ ...filters, q: search.trim() });
    setCursors([null]);
  };
  const page = orders.data;
  return html`<section>
    <h1>Orders</h1>
    <form class="filters" onSubmit=${submitSearch} role="search">
      <div><label for="f-status">Status</label>
        <select id="f-status" value=${filters.status} onChange=${set('status')}>
          <option value="">Any</option>
          ${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
        </select></div>
      <div><label for="f-scenario">Scenario</label>
        <select id="f-scenario" value=${filters.scenario} onChange=${set('scenario')}>
          <option value="">Any</option>
          ${(scenarios.data ?? []).map((s) => html`<option value=${s.name}>${s.name}</option>`)}
        </select></div>
      <div><label for="f-courier">Courier</label>
        <${FilterInput} id="f-courier" value=${filters.courier_code} onCommit=${setValue('courier_code')} placeholder="jne" /></div>
      <div><label for="f-q">Order number, AWB or order code</label>
        <input id="f-q" type="search" value=${search} onInput=${(e) => setSearch(e.currentTarget.value)} /></div>
      <div><button type="submit">Search</button></div>
    </form>
    <${ErrorBox} error=${orders.error} />
    ${page && html`<p class="muted" aria-live="polite">${page.total} ${page.total === 1 ? 'order' : 'orders'}</p>`}
    ${page && page.orders.length > 0 && html`<div class="scroll"><table class="orders">
      <thead><tr><th scope="col">Order number</th><th scope="col">Status</th><th scope="col">AWB</th><th scope="col">Order code</th><th scope="col">Courier</th><th scope="col">Scenario</th><th scope="col">Created</th></tr></thead>
      <tbody>${page.orders.map((o) => html`<tr>
        <td><a href=${`#/orders/${encodeURIComponent(o.order_no)}`}>${o.order_no}</a></td>
        <td><span class=${`status status-${o.status}`}>${breakable(o.status)}</span></td>
        <td>${o.awb ?? html`<span class="muted">${awbPending(o)}</span>`}</td>
        <td class="long-token">${o.order_code}</td><td>${o.courier_code}</td><td>${o.scenario}</td>
        <td>${time(o.created_at)}</td>
      </tr>`)}</tbody>
    </table></div>`}
    ${page && page.orders.length === 0 && html`<p>No orders match. Create one under <a href="#/scenarios">Scenarios</a>.</p>`}
    <${Pager} label="Orders pages" page=${cursors.length - 1} pages=${page ? Math.max(1, Math.ceil(page.total / PAGE_SIZE)) : 0}
      hasNext=${Boolean(page?.next_cursor)} onPrevious=${() => setCursors(cursors.slice(0, -1))} onNext=${() => setCursors([...cursors, page.next_cursor])} />
  </section>`;
}
