import { useEffect, useState } from '/dashboard/vendor/hooks.mjs';
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

/**
 * Runs `load` now and every `ms` while the view is shown; `deps` restart it. Data loaded
 * for other deps (a page or filter the reader has left) is not shown as the new one's.
 * `refresh` values restart it too, keeping what is shown until the new data comes.
 * A tab in the background asks for nothing, and loads at once when shown again; a load
 * that took long (a large store) waits four times its length before the next, so one tab
 * keeps the sandbox busy a fifth of the time at most.
 */
export function usePoll(load, deps, ms = 2500, refresh = []) {
  const key = JSON.stringify(deps);
  const [state, setState] = useState({ key: null, data: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    // Each run of the effect has its own liveness and timer: a load still in flight when
    // the deps change must neither show its data nor poll again under the old deps.
    let alive = true;
    let timer;
    let running = false;
    const run = async () => {
      timer = undefined;
      if (document.hidden) return; // `shown` runs it again
      running = true;
      const started = performance.now();
      try {
        const data = await load();
        if (alive) setState({ key, data, error: null, loading: false });
      } catch (error) {
        if (alive) setState((s) => ({ key, data: s.key === key ? s.data : null, error, loading: false }));
      }
      running = false;
      if (alive) timer = setTimeout(run, Math.max(ms, 4 * (performance.now() - started)));
    };
    const shown = () => {
      if (alive && !document.hidden && !running && timer === undefined) run();
    };
    document.addEventListener('visibilitychange', shown);
    run();
    return () => {
      alive = false;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', shown);
    };
  }, [...deps, ...refresh, tick]);
  const current = state.key === key;
  return { data: current ? state.data : null, error: current ? state.error : null, loading: !current || state.loading, reload: () => setTick((t) => t + 1) };
}

/**
 * Runs an action and keeps its result (message or error) for display. A new run drops
 * the last result at once; so does `clear`, for a submit the browser refused to send
 * (a form's `onInvalidCapture`), so no earlier error reads as this one's.
 */
export function useAction() {
  const [result, setResult] = useState(null);
  const [busy, setBusy] = useState(false);
  const clear = () => setResult(null);
  const run = async (action) => {
    setBusy(true);
    setResult(null);
    try {
      setResult({ message: await action() });
    } catch (error) {
      setResult({ error });
    } finally {
      setBusy(false);
    }
  };
  return { result, busy, run, clear };
}

/** An ISO time as the sandbox clock shows it (UTC, to the second). */
export function time(iso) {
  return iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '';
}

/**
 * What an order without an AWB shows for it: that it failed (with its error, `detail`),
 * that it will not come (cancelled before it), or when it falls due.
 */
export function awbPending(order, detail = false) {
  if (order.awb_error) return detail ? `failed: ${order.awb_error}` : 'failed';
  if (order.status === 'cancelled') return 'none: cancelled before it';
  return order.awb_due_at ? `due ${time(order.awb_due_at)}` : 'none';
}

/** JSON shown as text, pretty-printed. */
export function Json({ value }) {
  return html`<pre class="json" tabindex="0">${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}</pre>`;
}

/**
 * A text filter applied when the reader presses Enter or leaves the field. What is typed
 * before that is the field's own state: a poll re-rendering the view keeps it.
 */
export function FilterInput({ value, onCommit, ...props }) {
  const [draft, setDraft] = useState(value);
  useEffect(() => setDraft(value), [value]);
  return html`<input ...${props} value=${draft} onInput=${(e) => setDraft(e.currentTarget.value)} onChange=${(e) => onCommit(e.currentTarget.value.trim())} />`;
}

/**
 * Previous and next page of a listing, and where the reader is. `page` counts from 0;
 * `pages` is how many there are, when known.
 */
export function Pager({ page, pages, hasNext, onPrevious, onNext, label }) {
  return html`<nav class="pager" aria-label=${label}>
    <button type="button" class="secondary" disabled=${page === 0} onClick=${onPrevious}>Previous page</button>
    <span class="muted" aria-live="polite">Page ${page + 1}${pages ? ` of ${pages}` : ''}</span>
    <button type="button" class="secondary" disabled=${!hasNext} onClick=${onNext}>Next page</button>
  </nav>`;
}
