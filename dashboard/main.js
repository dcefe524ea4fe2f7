import { useEffect, useState } from '/dashboard/vendor/hooks.mjs';
import { call, session } from './api.js';
import { ErrorBox } from './components.js';
import { html, render } from './html.js';
import { ClockView } from './views/clock.js';
import { OrderView } from './views/order.js';
import { OrdersView } from './views/orders.js';
import { RequestsView } from './views/requests.js';
import { ScenariosView } from './views/scenarios.js';
import { WebhooksView } from './views/webhooks.js';

const VIEWS = [
  { path: 'orders', label: 'Orders' },
  { path: 'scenarios', label: 'Scenarios' },
  { path: 'webhooks', label: 'Webhooks' },
  { path: 'clock', label: 'Clock' },
  { path: 'requests', label: 'Requests' },
];

/** The view named by the location hash: `#/orders`, `#/orders/<order_no>`, `#/webhooks`, … */
function route() {
  const [view = 'orders', id] = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  return { view: VIEWS.some((v) => v.path === view) ? view : 'orders', id };
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

function SignIn({ onSignIn }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState(null);
  const submit = async (event) => {
    event.preventDefault();
    try {
      // The token is kept only once the sandbox accepts it.
      await call('GET', '/__sandbox/clock', { token: token.trim() });
      session.signIn(token.trim());
      onSignIn();
    } catch (e) {
      setError(e);
    }
  };
  return html`<main class="signin">
    <h1>Shipping Order Sandbox</h1>
    <form onSubmit=${submit}>
      <label for="token">Token</label>
      <input id="token" name="token" type="password" autocomplete="off" required value=${token} onInput=${(e) => setToken(e.currentTarget.value)} />
      <button type="submit">Sign in</button>
      <p class="muted">The token stays in this browser tab only and is sent as <code>Authorization: Bearer …</code>.</p>
    </form>
    <${ErrorBox} error=${error} />
  </main>`;
}

function Shell({ onSignOut }) {
  const { view, id } = useRoute();
  const body =
    view === 'orders' && id ? html`<${OrderView} orderNo=${id} key=${id} />`
    : view === 'orders' ? html`<${OrdersView} />`
    : view === 'scenarios' ? html`<${ScenariosView} />`
    : view === 'webhooks' ? html`<${WebhooksView} />`
    : view === 'clock' ? html`<${ClockView} />`
    : html`<${RequestsView} />`;
  return html`<div class="shell">
    <header>
      <a class="brand" href="#/orders">Shipping Order Sandbox</a>
      <nav aria-label="Views">
        <ul>${VIEWS.map((v) => html`<li><a href=${`#/${v.path}`} aria-current=${v.path === view ? 'page' : undefined}>${v.label}</a></li>`)}</ul>
      </nav>
      <button type="button" class="secondary" onClick=${onSignOut}>Sign out</button>
    </header>
    <main>${body}</main>
  </div>`;
}

function App() {
  const [signedIn, setSignedIn] = useState(Boolean(session.token));
  if (!signedIn) return html`<${SignIn} onSignIn=${() => setSignedIn(true)} />`;
  return html`<${Shell} onSignOut=${() => {
    session.signOut();
    setSignedIn(false);
  }} />`;
}

const root = document.getElementById('app');
root.textContent = ''; // the "Loading" note, shown until this module runs
render(html`<${App} />`, root);
