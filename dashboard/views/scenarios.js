import { useEffect, useState } from '/dashboard/vendor/hooks.mjs';
import { call, mayWrite } from '../api.js';
import { ErrorBox, usePoll } from '../components.js';
import { html } from '../html.js';

/** The editable fields of the form: where each lives in the create request, and its label. */
const FIELDS = [
  { path: ['sender_name'], label: 'Sender name' },
  { path: ['sender_address'], label: 'Sender address' },
  { path: ['courier_code'], label: 'Courier' },
  { path: ['items', 0, 'order_code'], label: 'Order code' },
  { path: ['items', 0, 'receiver_name'], label: 'Receiver name' },
  { path: ['items', 0, 'receiver_address'], label: 'Receiver address' },
  { path: ['items', 0, 'item_name'], label: 'Item name' },
  { path: ['items', 0, 'item_weight'], label: 'Item weight (kg)' },
];

const get = (object, path) => path.reduce((o, k) => o?.[k], object);
const set = (object, path, value) => {
  const copy = structuredClone(object);
  path.slice(0, -1).reduce((o, k) => o[k], copy)[path[path.length - 1]] = value;
  return copy;
};

/**
 * The first example of POST /v1/order in the provider spec the sandbox serves, with one item;
 * its courier the client's first when the client may not use the example's (a client limited
 * to some couriers, as `GET /__sandbox/whoami` says: a control read, where `GET /v1/couriers`
 * would be a provider request of the client's, journaled, counted and met by its fault rules).
 * `couriers`: the client's, or null when the sandbox did not say.
 */
async function specExample() {
  const [{ body: spec }, { body: who }] = await Promise.all([call('GET', '/__sandbox/openapi.json'), call('GET', '/__sandbox/whoami').catch(() => ({ body: null }))]);
  const examples = spec.paths['/v1/order'].post.requestBody.content['application/json'].examples;
  const example = structuredClone(Object.values(examples)[0].value);
  const request = { ...example, items: example.items.slice(0, 1) };
  const couriers = Array.isArray(who?.client?.couriers) ? who.client.couriers : null;
  if (couriers && couriers.length > 0 && !couriers.includes(request.courier_code)) request.courier_code = couriers[0];
  return { request, couriers };
}

/** Creates an order through the provider API (POST /v1/order) and opens its page. */
function NewOrder({ scenarios }) {
  const [request, setRequest] = useState(null);
  const [scenario, setScenario] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [couriers, setCouriers] = useState(null);
  useEffect(() => {
    specExample().then((example) => {
      setRequest(example.request);
      setCouriers(example.couriers);
    }, setError);
  }, []);
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const headers = scenario ? { 'X-Sandbox-Scenario': scenario } : {};
      const { body } = await call('POST', '/v1/order', { body: request, headers });
      location.hash = `#/orders/${encodeURIComponent(body.order_numbers[0])}`;
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return html`<section>
    <h2>New order</h2>
    <p class="muted">Prefilled from the provider spec's example; sent as <code>POST /v1/order</code>.</p>
    ${couriers?.length === 0 && html`<p class="muted">No courier is enabled for this client: every create answers 403 until its configuration enables one.</p>`}
    ${request && html`<form class="grid-form" onSubmit=${submit}>
      <div><label for="new-scenario">Scenario</label>
        <select id="new-scenario" value=${scenario} onChange=${(e) => setScenario(e.currentTarget.value)}>
          <option value="">The client's default</option>
          ${scenarios.map((s) => html`<option value=${s.name}>${s.name}</option>`)}
        </select></div>
      ${FIELDS.map((f) => {
        const id = `new-${f.path.join('-')}`;
        return html`<div><label for=${id}>${f.label}</label>
          <input id=${id} value=${get(request, f.path)} onInput=${(e) => setRequest(set(request, f.path, e.currentTarget.value))} /></div>`;
      })}
      <div><button type="submit" disabled=${busy}>Create order</button></div>
    </form>`}
    <${ErrorBox} error=${error} />
  </section>`;
}

/** Each scenario's steps and magic AWB, and the New order form. */
export function ScenariosView() {
  const scenarios = usePoll(async () => (await call('GET', '/__sandbox/scenarios')).body, [], 60_000);
  return html`<section>
    <h1>Scenarios</h1>
    <${ErrorBox} error=${scenarios.error} />
    ${scenarios.data && mayWrite() && html`<${NewOrder} scenarios=${scenarios.data} />`}
    <div class="cards">${(scenarios.data ?? []).map((s) => html`<article class="card">
      <h2>${s.name}</h2>
      <p>${s.description}</p>
      <p>Magic AWB: <code>${s.magic_awb}</code></p>
      ${(s.steps ?? []).length === 0 ? html`<p class="muted">No tracking steps.</p>` : html`<ol>${s.steps.map((step) => html`<li>
        <span class="muted">+${step.at}</span> ${step.note}${step.status ? ` (status ${step.status})` : ''}</li>`)}</ol>`}
    </article>`)}</div>
  </section>`;
}
