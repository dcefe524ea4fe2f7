import { useState } from '/dashboard/vendor/hooks.mjs';
import { call, mayWrite, mayWriteSandboxWide } from '../api.js';
import { ErrorBox, Result, time, useAction, usePoll } from '../components.js';
import { html } from '../html.js';

const UNITS = { minutes: 60_000, hours: 3_600_000, days: 86_400_000 };
/** The longest advance the control API takes: a year (365 days), in each unit. */
const MOST = { minutes: 525_600, hours: 8_760, days: 365 };

/** The number of `unit` typed in the box (1.5 hours is 90 minutes), or null when it is not one from 0 to a year. */
function parseAmount(text, unit) {
  const n = text.trim() === '' ? NaN : Number(text);
  return Number.isFinite(n) && n >= 0 && n <= MOST[unit] ? n : null;
}

/** The caller's sandbox time, and advancing it (manual clock). */
export function ClockView() {
  const clock = usePoll(async () => (await call('GET', '/__sandbox/clock')).body, [], 2000);
  const action = useAction();
  const [amount, setAmount] = useState('30');
  const [unit, setUnit] = useState('minutes');
  const [speed, setSpeed] = useState('60');
  // An empty or invalid box is refused in the page, and nothing is sent (Number('') is 0).
  const [missing, setMissing] = useState(false);
  const changeSpeed = (event) => {
    event.preventDefault();
    action.run(async () => {
      const { body } = await call('PUT', '/__sandbox/clock/speed', { body: { speed: Number(speed) } });
      clock.reload();
      return `Speed set: ×${body.speed}`;
    });
  };
  const advance = (ms, label) =>
    action.run(async () => {
      const { body } = await call('POST', '/__sandbox/clock/advance', { body: { ms } });
      clock.reload();
      return `Advanced ${label}: sandbox time is now ${time(body.now)}`;
    });
  const custom = (event) => {
    event.preventDefault();
    const n = parseAmount(amount, unit);
    if (n === null) {
      action.clear();
      return setMissing(true);
    }
    advance(Math.round(n * UNITS[unit]), `${n} ${unit}`);
  };
  const c = clock.data;
  return html`<section>
    <h1>Clock</h1>
    <${ErrorBox} error=${clock.error} />
    ${c && html`<dl class="details">
      <dt>Sandbox time</dt><dd><time datetime=${c.now}>${time(c.now)}</time></dd>
      <dt>Mode</dt><dd>${c.mode}</dd>
      <dt>Speed</dt><dd>×${c.speed}</dd>
      <dt>Jobs waiting</dt><dd>${c.pending_jobs}</dd>
      <dt>Next due</dt><dd>${c.next_due ? time(c.next_due) : 'nothing'}</dd>
    </dl>`}
    ${mayWrite() && html`<div class="actions">
      <button type="button" disabled=${action.busy} onClick=${() => advance(UNITS.hours, '1 hour')}>Advance 1 hour</button>
      <button type="button" disabled=${action.busy} onClick=${() => advance(UNITS.days, '1 day')}>Advance 1 day</button>
    </div>
    <form class="inline-form" onSubmit=${custom} onInvalidCapture=${action.clear}>
      <label for="advance-amount">Advance by</label>
      <input id="advance-amount" type="number" min="0" max=${MOST[unit]} step="any" required aria-invalid=${missing ? 'true' : undefined} aria-describedby=${missing ? 'advance-amount-missing' : undefined}
        value=${amount} onInput=${(e) => {
          setAmount(e.currentTarget.value);
          setMissing(false);
        }} onInvalid=${() => setMissing(true)} />
      <label for="advance-unit" class="visually-hidden">Unit</label>
      <select id="advance-unit" value=${unit} onChange=${(e) => {
        setUnit(e.currentTarget.value);
        setMissing(false);
      }}>
        ${Object.keys(UNITS).map((u) => html`<option value=${u}>${u}</option>`)}
      </select>
      <button type="submit" disabled=${action.busy}>Advance</button>
    </form>
    ${missing && html`<p id="advance-amount-missing" class="field-error" role="alert">Give how many ${unit} to advance by (a number from 0 to ${MOST[unit]}, a year): nothing was sent.</p>`}`}
    <${Result} result=${action.result} />
    ${c?.mode === 'real' && !mayWriteSandboxWide() && html`<p class="muted">The speed is the whole sandbox's: an admin token sets it.</p>`}
    ${c?.mode === 'real' &&
    mayWriteSandboxWide() &&
    html`<form class="inline-form" onSubmit=${changeSpeed}>
      <label for="clock-speed">Speed (simulated ms per real ms)</label>
      <input id="clock-speed" type="number" min="0" max="100000" step="any" required value=${speed} onInput=${(e) => {
        // Above 0, as the API has it (a min of 0 lets 0 through).
        e.currentTarget.setCustomValidity(Number(e.currentTarget.value) > 0 || e.currentTarget.value === '' ? '' : 'A speed above 0: 1 is real time, 60 a minute a second');
        setSpeed(e.currentTarget.value);
      }} />
      <button type="submit" disabled=${action.busy}>Set speed</button>
    </form>
    <p class="muted">The speed is the whole sandbox's: it changes every client's.</p>`}
  </section>`;
}
