import { useEffect, useRef, useState } from '/dashboard/vendor/hooks.mjs';
import { html } from './html.js';

/** An API error as the sandbox sent it: the request, the status, the message and each field error. */
export function ErrorBox({ error }) {
  if (!error) return null;
  return html`<div class="error" role="alert">
    <p><strong>${error.status ? `${error.status} ` : ''}${error.message}</strong></p>
    ${error.request && html`<p class="muted">${error.request}</p>`}
    ${error.errors?.length > 0 && html`<ul>${error.errors.map((e) => html`<li><code>${e.field}</code>: ${e.message}</li>`)}</ul>`}
  </div>`;
}

/** The outcome of an action: a message, or the API error. */
export function Result({ result }) {
  if (!result) return null;
  if (result.error) return html`<${ErrorBox} error=${result.error} />`;
  return html`<p class="result" role="status">${result.message}</p>`;
}

/** Runs `load` now and every `ms` while the view is shown; `deps` restart it. */
export function usePoll(load, deps, ms = 2500) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  const alive = useRef(true);
  useEffect(() => {
    alive.current = true;
    let timer;
    const run = async () => {
      try {
        const data = await load();
        if (alive.current) setState({ data, error: null, loading: false });
      } catch (error) {
        if (alive.current) setState((s) => ({ data: s.data, error, loading: false }));
      }
      if (alive.current) timer = setTimeout(run, ms);
    };
    run();
    return () => {
      alive.current = false;
      clearTimeout(timer);
    };
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

/** Runs an action and keeps its result (message or error) for display. */
export function useAction() {
  const [result, setResult] = useState(null);
  const [busy, setBusy] = useState(false);
  const run = async (action) => {
    setBusy(true);
    try {
      setResult({ message: await action() });
    } catch (error) {
      setResult({ error });
    } finally {
      setBusy(false);
    }
  };
  return { result, busy, run };
}

/** An ISO time as the sandbox clock shows it (UTC, to the second). */
export function time(iso) {
  return iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '';
}

/** JSON shown as text, pretty-printed. */
export function Json({ value }) {
  return html`<pre class="json" tabindex="0">${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}</pre>`;
}
