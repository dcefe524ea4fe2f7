import { useEffect, useState } from '/dashboard/vendor/hooks.mjs';
import { call, CLIENT_GONE, mayWrite, session, TOKEN_REFUSED } from './api.js';
import { ErrorBox } from './components.js';
import { html, render } from './html.js';
import { ClockView } from './views/clock.js';
import { OrderView } from './views/order.js';
import { OrdersView } from './views/orders.js';
import { ReportView } from './views/report.js';
import { RequestsView } from './views/requests.js';
import { ScenariosView } from './views/scenarios.js';
import { WebhooksView } from './views/webhooks.js';

const VIEWS = [
  { path: 'orders', label: 'Orders' },
  { path: 'scenarios', label: 'Scenarios' },
  { path: 'webhooks', label: 'Webhooks' },
  { path: 'clock', label: 'Clock' },
  { path: 'requests', label: 'Requests' },
  { path: 'report', label: 'Readiness' },
];

/** A part of the address as written: `%E0%A4%A` or a lone `%` is no escape, and reads as it is. */
function decoded(part) {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** The view named by the location hash: `#/orders`, `#/orders/<order_no>`, `#/webhooks`, … */
function route() {
  const [view = 'orders', id] = location.hash.replace(/^#\/?/, '').split('/').map(decoded);
  // An address of no view (mistyped, or an old bookmark) shows the orders, and says so.
  return VIEWS.some((v) => v.path === view) ? { view, id } : { view: 'orders', unknown: view };
}

function useRoute() {
  const [current, setCurrent] = useState(route());
  useEffect(() => {
    const changed = () => setCurrent(route());
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return current;
}

function SignIn({ onSignIn, refused }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState(refused ?? null);
  const submit = async (event) => {
    event.preventDefault();
    const given = token.trim();
    setError(null);
    try {
      // The token is kept only once the sandbox accepts it; what it is decides which actions are offered.
      const { body: who } = await call('GET', '/__sandbox/whoami', { token: given });
      // An admin token of a sandbox with several clients acts for one: the clients it may pick are listed.
      const actFor = who.role === 'admin' && who.client === null ? ((await call('GET', '/__sandbox/clients', { token: given })).body.clients[0]?.id ?? null) : null;
      session.signIn(given);
      session.know(who);
      session.actFor(actFor);
      onSignIn();
    } catch (e) {
      setError(e);
    }
  };
  return html`<main class="signin">
    <h1>Shipping Order Sandbox</h1>
    <form onSubmit=${submit} onInvalidCapture=${() => setError(null)}>
      <label for="token">Token</label>
      <input id="token" name="token" type="password" autocomplete="off" required value=${token} onInput=${(e) => setToken(e.currentTarget.value)} />
      <button type="submit">Sign in</button>
      <p class="muted">Use a token of this sandbox: <code>npm start</code> prints one (the <code>token:</code> line of its banner, also in <code>docker logs</code>); <code>--token</code>, <code>SANDBOX_TOKENS</code> or the config file set others, and in a shared deployment its operator gives you yours.</p>
      <p class="muted">The token stays in this browser tab only and is sent as <code>Authorization: Bearer …</code>.</p>
    </form>
    <${ErrorBox} error=${error} />
  </main>`;
}

/**
 * For an admin token: which client the dashboard shows (X-Sandbox-Client). Nothing for a client's own token.
 * When the chosen client is gone from the sandbox (restarted without it), it is offered again, saying so.
 */
function ClientSwitch() {
  const [clients, setClients] = useState(null);
  const [gone, setGone] = useState(session.goneClient);
  useEffect(() => {
    const load = () => call('GET', '/__sandbox/clients').then(({ body }) => setClients(body.clients), () => setClients(null));
    const dropped = () => {
      setGone(session.goneClient);
      load();
    };
    addEventListener(CLIENT_GONE, dropped);
    if (session.client || session.goneClient) load();
    return () => removeEventListener(CLIENT_GONE, dropped);
  }, []);
  if (!clients) return null;
  const pick = (event) => {
    session.actFor(event.currentTarget.value);
    location.hash = '#/orders';
    location.reload();
  };
  return html`<span class="client-switch">
    <label for="act-for">Client</label>
    <select id="act-for" value=${session.client ?? ''} onChange=${pick} aria-describedby=${gone ? 'client-gone' : undefined}>
      ${!session.client && html`<option value="" disabled>Pick a client</option>`}
      ${clients.map((c) => html`<option value=${c.id}>${c.name === c.id ? c.id : `${c.name} (${c.id})`}</option>`)}
    </select>
    ${gone && html`<span id="client-gone" class="field-error" role="alert">Client "${gone}" is no longer in this sandbox: pick one.</span>`}
  </span>`;
}

function Shell({ onSignOut }) {
  const { view, id, unknown } = useRoute();
  const body =
    view === 'orders' && id ? html`<${OrderView} orderNo=${id} key=${id} />`
    : view === 'orders' ? html`<${OrdersView} />`
    : view === 'scenarios' ? html`<${ScenariosView} />`
    : view === 'webhooks' ? html`<${WebhooksView} />`
    : view === 'clock' ? html`<${ClockView} />`
    : view === 'report' ? html`<${ReportView} />`
    : html`<${RequestsView} />`;
  return html`<div class="shell">
    <header>
      <a class="brand" href="#/orders">Shipping Order Sandbox</a>
      <nav aria-label="Views">
        <ul>${VIEWS.map((v) => html`<li><a href=${`#/${v.path}`} aria-current=${v.path === view ? 'page' : undefined}>${v.label}</a></li>`)}</ul>
      </nav>
      <${ClientSwitch} />
      <button type="button" class="secondary" onClick=${onSignOut}>Sign out</button>
    </header>
    <main>
      ${!mayWrite() && html`<p class="muted role-note">Signed in with a read_only token: everything is shown, and no action is offered.</p>`}
      ${unknown && html`<p class="muted" role="status">No view is called "${unknown.length > 40 ? `${unknown.slice(0, 40)}…` : unknown}" (the views: ${VIEWS.map((v) => v.path).join(', ')}): here are the orders.</p>`}
      ${body}
    </main>
  </div>`;
}

function App() {
  const [signedIn, setSignedIn] = useState(Boolean(session.token));
  const [refused, setRefused] = useState(null);
  useEffect(() => {
    const out = (event) => {
      setRefused(event.detail);
      setSignedIn(false);
    };
    addEventListener(TOKEN_REFUSED, out);
    return () => removeEventListener(TOKEN_REFUSED, out);
  }, []);
  if (!signedIn) return html`<${SignIn} refused=${refused} onSignIn=${() => {
    setRefused(null);
    setSignedIn(true);
  }} />`;
  return html`<${Shell} onSignOut=${() => {
    session.signOut();
    // The next sign-in may be another client's: it starts at the orders list, not at a page of this one's.
    location.hash = '#/orders';
    setSignedIn(false);
  }} />`;
}

const root = document.getElementById('app');
root.textContent = ''; // the "Loading" note, shown until this module runs
render(html`<${App} />`, root);
