import { useEffect, useRef, useState } from '/dashboard/vendor/hooks.mjs';
import { call, mayWrite, query } from '../api.js';
import { ErrorBox, Json, Pager, Result, time, useAction, usePoll } from '../components.js';
import { html } from '../html.js';

const STATUSES = ['pending', 'queued', 'delivered', 'failed', 'paused'];
const EVENTS = ['awb.generated', 'awb.failed', 'order.cancelled', 'ping'];
/** The events an endpoint's filter may name (the test ping goes to the endpoint it is sent to). */
const FILTER_EVENTS = ['awb.generated', 'awb.failed', 'order.cancelled'];
const PAGE_SIZE = 20;

function Endpoint({ endpoint, onChange }) {
  const [url, setUrl] = useState(endpoint.url ?? '');
  const action = useAction();
  // The field follows the saved URL when it changes (a save, another tab), never on mount:
  // an effect runs after the first paint, and would clear what was typed in between.
  const shown = useRef(endpoint.url);
  useEffect(() => {
    if (endpoint.url === shown.current) return;
    shown.current = endpoint.url;
    setUrl(endpoint.url ?? '');
  }, [endpoint.url]);
  const put = (body, done) =>
    action.run(async () => {
      const { body: after } = await call('PUT', '/__sandbox/webhook', { body });
      onChange();
      return done(after);
    });
  const save = (event) => {
    event.preventDefault();
    // Trimmed: a URL pasted with a space or a line break around it is still that URL.
    put({ url: url.trim() }, (after) => `Webhooks go to ${after.url} (${after.state})`);
  };
  // Only the secret changes: the URL, its source (config or runtime), enabled and the filter stay as they are.
  const rotate = () =>
    action.run(async () => {
      await call('PATCH', '/__sandbox/webhooks/endpoints/default', { body: { rotate_secret: true } });
      onChange();
      return 'Secret rotated: verify signatures with the new one';
    });
  const test = () =>
    action.run(async () => {
      const { body } = await call('POST', '/__sandbox/webhooks/test');
      onChange();
      const attempt = body.attempts[0];
      return `Test ping ${body.id}: ${attempt?.status_code ?? attempt?.error ?? body.status}`;
    });
  return html`<section>
    <h2>Default endpoint</h2>
    ${mayWrite()
      ? html`<form class="inline-form" onSubmit=${save} onInvalidCapture=${action.clear}>
          <label for="webhook-url">Endpoint URL</label>
          <input id="webhook-url" type="url" required value=${url} onInput=${(e) => setUrl(e.currentTarget.value)} placeholder="https://example.test/webhooks" />
          <button type="submit" disabled=${action.busy}>Save URL</button>
        </form>`
      : html`<p>Endpoint URL: <code class="wrap-anywhere">${endpoint.url ?? 'none'}</code></p>`}
    ${endpoint.state === 'no_url' && html`<p class="muted">Until a URL is set, webhooks are held (paused); the first URL set gets every held one.</p>`}
    <dl class="details">
      <dt>State</dt><dd>${endpoint.state}${endpoint.disabled_reason ? `: ${endpoint.disabled_reason}` : ''} <span class="muted">${endpoint.source === 'none' ? '(no URL set)' : `(URL from ${endpoint.source})`}</span></dd>
      <dt>Secret</dt><dd><code class="secret">${endpoint.secret}</code></dd>
      <dt>Retries</dt><dd>${endpoint.retry_schedule_ms.map((ms) => `${ms / 1000}s`).join(', ')}</dd>
    </dl>
    ${mayWrite() && html`<div class="actions">
      <button type="button" class="secondary" disabled=${action.busy} onClick=${rotate}>Rotate secret</button>
      <button type="button" disabled=${action.busy} onClick=${test}>Send test</button>
    </div>`}
    <${Result} result=${action.result} />
  </section>`;
}

/** Where an endpoint's deliveries go: its URL, or the listener it forwards through (and whether it is connected: held while not). */
const targetOf = (endpoint) => {
  if (!endpoint.listener) return endpoint.url ?? 'no URL';
  if (endpoint.connected) return `listener ${endpoint.listener} (connected)`;
  return `listener ${endpoint.listener} (not connected${endpoint.last_seen_at ? `, last seen ${endpoint.last_seen_at}` : ''}: deliveries held)`;
};

/**
 * One endpoint as a row: where it sends, whether it is enabled, which events it takes.
 * `Delete` runs on `removal`, the section's action: the row goes with the endpoint, its result stays.
 */
function EndpointRow({ endpoint, onChange, removal }) {
  const action = useAction();
  const patch = (body, done) =>
    action.run(async () => {
      await call('PATCH', `/__sandbox/webhooks/endpoints/${endpoint.id}`, { body });
      onChange();
      return done;
    });
  const remove = () =>
    removal.run(async () => {
      await call('DELETE', `/__sandbox/webhooks/endpoints/${endpoint.id}`);
      onChange();
      return `Endpoint ${endpoint.id} deleted`;
    });
  const name = endpoint.id === 'default' ? 'default' : endpoint.id;
  return html`<tbody class="endpoint">
    <tr>
      <td data-label="Endpoint" class="wrap-anywhere">${name}${endpoint.description ? html`<br /><span class="muted">${endpoint.description}</span>` : ''}</td>
      <td data-label="Sends to" class="wrap-anywhere wide">${targetOf(endpoint)}</td>
      <td data-label="State"><span class=${`status status-${endpoint.state}`}>${endpoint.state}</span>${endpoint.disabled_reason ? html`<br /><span class="muted">${endpoint.disabled_reason}</span>` : ''}</td>
      <td data-label="Events">${endpoint.events === null ? html`<span class="muted">every event</span>` : endpoint.events.length === 0 ? html`<span class="muted">no event</span>` : endpoint.events.join(', ')}</td>
      <td class="row-actions wide">
        ${mayWrite() && endpoint.enabled
          ? html`<button type="button" class="secondary" aria-label=${`Disable ${name}`} disabled=${action.busy} onClick=${() => patch({ enabled: false }, `Endpoint ${name} disabled`)}>Disable</button>`
          : mayWrite() && html`<button type="button" class="secondary" aria-label=${`Enable ${name}`} disabled=${action.busy} onClick=${() => patch({ enabled: true }, `Endpoint ${name} enabled`)}>Enable</button>`}
        ${mayWrite() && endpoint.id !== 'default' && html`<button type="button" class="secondary" aria-label=${`Delete ${name}`} disabled=${action.busy || removal.busy} onClick=${remove}>Delete</button>`}
      </td>
    </tr>
    ${action.result && html`<tr><td colspan="5" class="wide"><${Result} result=${action.result} /></td></tr>`}
  </tbody>`;
}

/** A form that adds a URL endpoint with an event filter (none ticked: every event); `action` is the section's, which a Delete shares. */
function NewEndpoint({ onChange, action }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState([]);
  const toggle = (event) => setEvents(events.includes(event) ? events.filter((e) => e !== event) : [...events, event]);
  const add = (submit) => {
    submit.preventDefault();
    action.run(async () => {
      const { body } = await call('POST', '/__sandbox/webhooks/endpoints', { body: { url: url.trim(), ...(events.length > 0 ? { events } : {}) } });
      setUrl('');
      setEvents([]);
      onChange();
      return `Endpoint ${body.id} added: ${body.events === null ? 'every event' : body.events.join(', ')}`;
    });
  };
  return html`<form class="inline-form" onSubmit=${add} onInvalidCapture=${action.clear}>
    <label for="new-endpoint-url">URL for a new endpoint</label>
    <input id="new-endpoint-url" type="url" required value=${url} onInput=${(e) => setUrl(e.currentTarget.value)} placeholder="https://staging.example.test/webhooks" />
    <fieldset class="events"><legend>Events (none ticked: every event)</legend>
      ${FILTER_EVENTS.map((e) => html`<label><input type="checkbox" checked=${events.includes(e)} onChange=${() => toggle(e)} /> ${e}</label>`)}
    </fieldset>
    <button type="submit" disabled=${action.busy}>Add endpoint</button>
    <${Result} result=${action.result} />
  </form>`;
}

/** Every endpoint of the client: an event goes to each enabled one whose filter admits it. Adding and deleting show their result in one place. */
function Endpoints({ endpoints, onChange }) {
  const action = useAction();
  return html`<section>
    <h2>All endpoints</h2>
    <p class="muted">Each event goes to every enabled endpoint whose filter admits it, as a delivery of its own.</p>
    <div class="scroll"><table class="endpoints wrap stack">
      <caption class="visually-hidden">Webhook endpoints</caption>
      <thead><tr><th scope="col">Endpoint</th><th scope="col">Sends to</th><th scope="col">State</th><th scope="col">Events</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      ${endpoints.map((e) => html`<${EndpointRow} key=${e.id} endpoint=${e} onChange=${onChange} removal=${action} />`)}
    </table></div>
    ${mayWrite() && html`<${NewEndpoint} onChange=${onChange} action=${action} />`}
  </section>`;
}

/**
 * The headers every attempt is sent with. The signature itself is not recorded: it is
 * the Standard Webhooks HMAC of id, timestamp and body with the secret.
 */
function attemptHeaders(delivery, attempt) {
  return {
    'content-type': 'application/json',
    'user-agent': 'shipping-sandbox-webhooks/1',
    'webhook-id': delivery.id,
    'webhook-timestamp': String(attempt.webhook_timestamp),
    'webhook-signature': 'v1,… (not recorded)',
  };
}

function Attempt({ delivery, attempt }) {
  const ok = attempt.status_code !== null && attempt.status_code >= 200 && attempt.status_code < 300;
  return html`<li class=${`attempt ${ok ? 'ok' : 'failed'}`}>
    <h4>Attempt ${attempt.n} <span class="muted">(${attempt.trigger}${attempt.chaos ? `, chaos ${attempt.chaos}` : ''})</span></h4>
    <p>${time(attempt.at)} · <code>POST ${attempt.url}</code></p>
    <p>Response: <strong>${attempt.status_code ?? 'no answer'}</strong>${attempt.error ? ` (${attempt.error})` : ''} in ${attempt.duration_ms} ms</p>
    <details>
      <summary>Request and response of attempt ${attempt.n}</summary>
      <h5>Request headers</h5><${Json} value=${attemptHeaders(delivery, attempt)} />
      <h5>Request body</h5><${Json} value=${delivery.payload} />
      <h5>Response body</h5><${Json} value=${attempt.response_body === '' ? '(empty)' : attempt.response_body} />
    </details>
  </li>`;
}

/** One delivery as a row; its attempts folded below it until asked for. */
function Delivery({ delivery, onChange }) {
  const [open, setOpen] = useState(false);
  const action = useAction();
  const redeliver = () =>
    action.run(async () => {
      const { body } = await call('POST', `/__sandbox/webhooks/deliveries/${delivery.id}/redeliver`);
      onChange();
      const attempt = body.attempts[body.attempts.length - 1];
      return `Attempt ${attempt.n}: ${attempt.status_code ?? attempt.error}`;
    });
  // The message's own last attempt: not a copy its chaos asked for (the forged one a receiver rightly refuses).
  const last = delivery.attempts.findLast((a) => !a.chaos) ?? delivery.attempts[delivery.attempts.length - 1];
  const count = delivery.attempts.length;
  const panel = `attempts-${delivery.id}`;
  return html`<tbody class="delivery">
    <tr>
      <td data-label="Event" class="nowrap">${delivery.event}</td>
      <td data-label="Endpoint" class="wrap-anywhere">${delivery.endpoint_id}</td>
      <td data-label="Status"><span class=${`status status-${delivery.status}`}>${delivery.status}</span></td>
      <td data-label="Order" class="nowrap">${delivery.order_no ? html`<a href=${`#/orders/${delivery.order_no}`}>${delivery.order_no}</a>` : html`<span class="muted">none</span>`}</td>
      <td data-label="Delivery id" class="wrap-anywhere wide"><code>${delivery.id}</code></td>
      <td data-label="Created">${time(delivery.created_at)}</td>
      <td data-label="Attempts">${count === 0 ? html`<span class="muted">none yet</span>` : html`<span class="nowrap">${count} · last ${last.status_code ?? 'no answer'}</span>`}${delivery.next_attempt_at ? html`<br /><span class="muted">next ${time(delivery.next_attempt_at)}</span>` : ''}</td>
      <td class="row-actions wide">
        <button type="button" class="secondary" aria-expanded=${open ? 'true' : 'false'} aria-controls=${panel} disabled=${count === 0} onClick=${() => setOpen(!open)}>${open ? 'Hide' : 'Show'} attempts (${count})</button>
        ${mayWrite() && html`<button type="button" class="secondary" disabled=${action.busy} onClick=${redeliver}>Redeliver</button>`}
      </td>
    </tr>
    ${action.result && html`<tr><td colspan="8" class="wide"><${Result} result=${action.result} /></td></tr>`}
    ${open && html`<tr class="attempts-row" id=${panel}><td colspan="8" class="wide">
      ${delivery.last_error && html`<p class="muted">Last error: ${delivery.last_error}</p>`}
      <ol class="attempts">${delivery.attempts.map((a) => html`<${Attempt} key=${a.n} delivery=${delivery} attempt=${a} />`)}</ol>
    </td></tr>`}
  </tbody>`;
}

/** The deliveries, newest first, a page at a time (limit + cursor), filtered by status, event and endpoint. */
function Deliveries({ version, endpoints, onChange }) {
  const [filters, setFilters] = useState({ status: '', event: '', endpoint_id: '' });
  const [cursors, setCursors] = useState([null]); // the cursor of each page shown so far
  const cursor = cursors[cursors.length - 1];
  const deliveries = usePoll(
    async () => (await call('GET', `/__sandbox/webhooks/deliveries${query({ ...filters, limit: PAGE_SIZE, cursor })}`)).body,
    [JSON.stringify(filters), cursor],
    2500,
    [version],
  );
  const set = (name) => (event) => {
    setFilters({ ...filters, [name]: event.currentTarget.value });
    setCursors([null]);
  };
  const page = deliveries.data;
  return html`<section>
    <h2>Deliveries</h2>
    <form class="filters" onSubmit=${(e) => e.preventDefault()}>
      <div><label for="d-status">Delivery status</label>
        <select id="d-status" value=${filters.status} onChange=${set('status')}>
          <option value="">Any</option>
          ${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
        </select></div>
      <div><label for="d-event">Event</label>
        <select id="d-event" value=${filters.event} onChange=${set('event')}>
          <option value="">Any</option>
          ${EVENTS.map((e) => html`<option value=${e}>${e}</option>`)}
        </select></div>
      <div><label for="d-endpoint">Endpoint</label>
        <select id="d-endpoint" value=${filters.endpoint_id} onChange=${set('endpoint_id')}>
          <option value="">Any</option>
          ${endpoints.map((e) => html`<option value=${e.id}>${e.id}</option>`)}
        </select></div>
    </form>
    <${ErrorBox} error=${deliveries.error} />
    ${page && html`<p class="muted">${page.total} ${page.total === 1 ? 'delivery' : 'deliveries'}, newest first</p>`}
    ${page && page.deliveries.length > 0 && html`<div class="scroll"><table class="deliveries wrap stack">
      <caption class="visually-hidden">Webhook deliveries</caption>
      <thead><tr><th scope="col">Event</th><th scope="col">Endpoint</th><th scope="col">Status</th><th scope="col">Order</th><th scope="col">Delivery id</th><th scope="col">Created</th><th scope="col">Attempts</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      ${page.deliveries.map((d) => html`<${Delivery} key=${d.id} delivery=${d} onChange=${onChange} />`)}
    </table></div>`}
    <${Pager} label="Deliveries pages" page=${cursors.length - 1} pages=${page ? Math.max(1, Math.ceil(page.total / PAGE_SIZE)) : 0}
      hasNext=${Boolean(page?.next_cursor)} onPrevious=${() => setCursors(cursors.slice(0, -1))} onNext=${() => setCursors([...cursors, page.next_cursor])} />
  </section>`;
}

/** The default endpoint and its secret, every endpoint, and the deliveries with their attempts. */
export function WebhooksView() {
  const endpoint = usePoll(async () => (await call('GET', '/__sandbox/webhook')).body, [], 10_000);
  const endpoints = usePoll(async () => (await call('GET', '/__sandbox/webhooks/endpoints')).body.endpoints, [], 10_000);
  const [version, setVersion] = useState(0);
  const changed = () => {
    endpoint.reload();
    endpoints.reload();
    setVersion((v) => v + 1);
  };
  return html`<section>
    <h1>Webhooks</h1>
    <${ErrorBox} error=${endpoint.error ?? endpoints.error} />
    ${endpoint.data && html`<${Endpoint} endpoint=${endpoint.data} onChange=${changed} />`}
    ${endpoints.data && html`<${Endpoints} endpoints=${endpoints.data} onChange=${changed} />`}
    <${Deliveries} version=${version} endpoints=${endpoints.data ?? []} onChange=${changed} />
  </section>`;
}
