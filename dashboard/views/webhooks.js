import { useEffect, useState } from '/dashboard/vendor/hooks.mjs';
import { call } from '../api.js';
import { ErrorBox, Json, Result, time, useAction, usePoll } from '../components.js';
import { html } from '../html.js';

/** A new secret: `whsec_` + base64 of 24 random bytes, as the control API expects. */
function newSecret() {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

function Endpoint({ endpoint, onChange }) {
  const [url, setUrl] = useState(endpoint.url ?? '');
  const action = useAction();
  useEffect(() => setUrl(endpoint.url ?? ''), [endpoint.url]);
  const put = (body, done) =>
    action.run(async () => {
      const { body: after } = await call('PUT', '/__sandbox/webhook', { body });
      onChange();
      return done(after);
    });
  const save = (event) => {
    event.preventDefault();
    put({ url }, (after) => `Webhooks go to ${after.url} (${after.state})`);
  };
  const rotate = () => put({ url: endpoint.url ?? url, secret: newSecret() }, () => 'Secret rotated: verify signatures with the new one');
  const test = () =>
    action.run(async () => {
      const { body } = await call('POST', '/__sandbox/webhooks/test');
      onChange();
      const attempt = body.attempts[0];
      return `Test ping ${body.id}: ${attempt?.status_code ?? attempt?.error ?? body.status}`;
    });
  return html`<section>
    <h2>Endpoint</h2>
    <form class="inline-form" onSubmit=${save}>
      <label for="webhook-url">Endpoint URL</label>
      <input id="webhook-url" type="url" required value=${url} onInput=${(e) => setUrl(e.currentTarget.value)} placeholder="https://example.test/webhooks" />
      <button type="submit" disabled=${action.busy}>Save URL</button>
    </form>
    <dl class="details">
      <dt>State</dt><dd>${endpoint.state}${endpoint.disabled_reason ? `: ${endpoint.disabled_reason}` : ''} <span class="muted">(URL from ${endpoint.source})</span></dd>
      <dt>Secret</dt><dd><code class="secret">${endpoint.secret}</code></dd>
      <dt>Retries</dt><dd>${endpoint.retry_schedule_ms.map((ms) => `${ms / 1000}s`).join(', ')}</dd>
    </dl>
    <div class="actions">
      <button type="button" class="secondary" disabled=${action.busy} onClick=${rotate}>Rotate secret</button>
      <button type="button" disabled=${action.busy} onClick=${test}>Send test</button>
    </div>
    <${Result} result=${action.result} />
  </section>`;
}

/**
 * The headers every attempt is sent with (src/webhooks/send.ts). The signature itself is
 * not recorded: it is the Standard Webhooks HMAC of id, timestamp and body with the secret.
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

function Delivery({ delivery, onChange }) {
  const action = useAction();
  const redeliver = () =>
    action.run(async () => {
      const { body } = await call('POST', `/__sandbox/webhooks/deliveries/${delivery.id}/redeliver`);
      onChange();
      const attempt = body.attempts[body.attempts.length - 1];
      return `Attempt ${attempt.n}: ${attempt.status_code ?? attempt.error}`;
    });
  return html`<article class="card delivery">
    <h3>${delivery.event} <span class=${`status status-${delivery.status}`}>${delivery.status}</span></h3>
    <p><code>${delivery.id}</code>${delivery.order_no && html` · order <a href=${`#/orders/${delivery.order_no}`}>${delivery.order_no}</a>`} · ${time(delivery.created_at)}</p>
    ${delivery.next_attempt_at && html`<p class="muted">Next attempt due ${time(delivery.next_attempt_at)}</p>`}
    ${delivery.last_error && html`<p class="muted">Last error: ${delivery.last_error}</p>`}
    <ol class="attempts">${delivery.attempts.map((a) => html`<${Attempt} delivery=${delivery} attempt=${a} />`)}</ol>
    <button type="button" class="secondary" disabled=${action.busy} onClick=${redeliver}>Redeliver</button>
    <${Result} result=${action.result} />
  </article>`;
}

/** The endpoint and its secret, and every delivery with every attempt. */
export function WebhooksView() {
  const endpoint = usePoll(async () => (await call('GET', '/__sandbox/webhook')).body, [], 10_000);
  const deliveries = usePoll(async () => (await call('GET', '/__sandbox/webhooks/deliveries?limit=50')).body, []);
  const changed = () => {
    endpoint.reload();
    deliveries.reload();
  };
  return html`<section>
    <h1>Webhooks</h1>
    <${ErrorBox} error=${endpoint.error} />
    ${endpoint.data && html`<${Endpoint} endpoint=${endpoint.data} onChange=${changed} />`}
    <section>
      <h2>Deliveries</h2>
      <${ErrorBox} error=${deliveries.error} />
      ${deliveries.data && html`<p class="muted">${deliveries.data.total} in all, newest first${deliveries.data.total > deliveries.data.deliveries.length ? ` (the latest ${deliveries.data.deliveries.length} shown)` : ''}</p>`}
      ${deliveries.data?.deliveries.map((d) => html`<${Delivery} key=${d.id} delivery=${d} onChange=${changed} />`)}
    </section>
  </section>`;
}
