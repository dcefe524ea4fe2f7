import { useEffect, useState } from '/dashboard/vendor/hooks.mjs';
import { ApiError, call, mayWrite, session } from '../api.js';
import { awbPending, ErrorBox, Json, Result, time, useAction, usePoll } from '../components.js';
import { html } from '../html.js';

const fromEpoch = (seconds) => new Date(seconds * 1000).toISOString();

/** The tracking answer exactly as a client receives it: GET /v1/order/tracking/{awb}. */
function Tracking({ awb, version }) {
  const [answer, setAnswer] = useState(null);
  useEffect(() => {
    if (!awb) return undefined;
    // Fetched when the order changes, not on every poll: each call is a provider request in the journal.
    // Ended when the view moves on, so an older answer never overwrites a newer one, nor a held one keeps a connection.
    const left = new AbortController();
    setAnswer(null);
    call('GET', `/v1/order/tracking/${encodeURIComponent(awb)}`, { signal: left.signal }).then(
      (r) => setAnswer({ status: r.status, body: r.body }),
      // As it came (a fault rule's own body too); no answer at all (a held request, the sandbox away) is an error, not an answer.
      (e) => !left.signal.aborted && setAnswer(e.status === 0 ? { error: e } : { status: e.status, body: e.body }),
    );
    return () => left.abort();
  }, [awb, version]);
  return html`<section>
    <h2>Tracking answer</h2>
    ${!awb && html`<p class="muted">No AWB yet: tracking is by AWB.</p>`}
    ${awb && !answer && html`<p class="muted">Reading the tracking answer…</p>`}
    ${awb && answer?.error && html`<${ErrorBox} error=${answer.error} />`}
    ${awb && answer && !answer.error && html`<p><code>GET /v1/order/tracking/${awb}</code> → <strong>${answer.status}</strong></p><${Json} value=${answer.body} />`}
    ${awb && session.who?.role === 'partner' && html`<p class="muted">Read with the client's partner token: a request of the client's like any other, graded in its readiness report (a read before its AWB webhook was acknowledged counts as one too early). Its read_only token browses without that.</p>`}
  </section>`;
}

function Timeline({ order }) {
  const played = [...order.history].reverse();
  return html`<section>
    <h2>Timeline</h2>
    <h3>Played</h3>
    ${played.length === 0 ? html`<p class="muted">No step played yet.</p>` : html`<ol class="timeline">${played.map((step) => html`<li>
      <time datetime=${fromEpoch(step.update_on)}>${time(fromEpoch(step.update_on))}</time>
      <strong>${step.note}</strong>${step.status ? html` <span class="muted">(status ${step.status})</span>` : ''}
      <div>${step.description}</div><div class="muted">${step.branch}</div>
    </li>`)}</ol>`}
    <h3>Upcoming</h3>
    ${order.upcoming.length === 0 ? html`<p class="muted">Nothing is left to play.</p>` : html`<ol class="timeline upcoming">${order.upcoming.map((step) => html`<li>
      <time datetime=${step.due_at}>due ${time(step.due_at)}</time>
      <strong>${step.note}</strong> <span class="muted">(${step.key}${step.status ? `, status ${step.status}` : ''})</span>
    </li>`)}</ol>`}
  </section>`;
}

function Details({ order }) {
  const s = order.sender ?? {};
  const i = order.item ?? {};
  return html`<dl class="details">
    <dt>Status</dt><dd><span class=${`status status-${order.status}`}>${order.status}</span></dd>
    <dt>AWB</dt><dd>${order.awb ?? awbPending(order, true)}</dd>
    <dt>Courier</dt><dd><bdi>${order.courier_code}</bdi> (service <bdi>${order.service_code}</bdi>)</dd>
    <dt>Scenario</dt><dd>${order.scenario}</dd>
    <dt>Order code</dt><dd><bdi>${order.order_code}</bdi></dd>
    <dt>Sender</dt><dd><bdi>${s.sender_name}</bdi><br /><bdi>${s.sender_address}</bdi><br /><bdi>${s.sender_phone}</bdi></dd>
    <dt>Item</dt><dd><bdi>${i.item_name}</bdi> × ${i.item_qty}, ${i.item_weight} kg, value ${i.item_value}</dd>
    <dt>Receiver</dt><dd><bdi>${i.receiver_name}</bdi><br /><bdi>${i.receiver_address}</bdi><br /><bdi>${i.receiver_phone}</bdi></dd>
    <dt>Created</dt><dd>${time(order.created_at)}</dd>
    ${order.next && html`<dt>Next</dt><dd>${order.next.kind === 'awb' ? 'AWB' : order.next.step} due ${time(order.next.due_at)}</dd>`}
  </dl>`;
}

/** Statuses after which nothing is left to do to an order. */
const FINAL = ['delivered', 'returned', 'cancelled', 'awb_failed'];

/**
 * Which actions the order's state allows, as the control API would answer them: an AWB
 * while it waits for one, a step while one is left after the AWB, a cancellation before
 * the pick-up scan.
 */
function allowed(order) {
  const final = FINAL.includes(order.status);
  return {
    generate: order.status === 'created',
    advance: !final && Boolean(order.awb) && order.upcoming.length > 0,
    cancel: order.status === 'created' || order.status === 'awb_generated',
    why: final ? `The order is ${order.status}: nothing is left to do.` : '',
  };
}

/** One order: its state, timeline, tracking answer and the actions that drive it. */
export function OrderView({ orderNo }) {
  const state = usePoll(async () => (await call('GET', `/__sandbox/orders/${encodeURIComponent(orderNo)}`)).body, [orderNo]);
  const action = useAction();
  const order = state.data;
  const can = order ? allowed(order) : {};
  const act = (run) => () =>
    action.run(async () => {
      const message = await run();
      state.reload();
      return message;
    });
  const generate = act(async () => {
    const { body } = await call('POST', `/__sandbox/orders/${orderNo}/awb`);
    return body.awb ? `AWB ${body.awb} (status ${body.status})` : `No AWB: ${body.awb_error ?? body.status}`;
  });
  const advance = act(async () => {
    const { body } = await call('POST', `/__sandbox/orders/${orderNo}/advance`);
    return `Played ${body.history[0]?.note ?? 'a step'}: status ${body.status}`;
  });
  const cancel = act(async () => {
    const { body } = await call('POST', '/v1/order/cancel', { body: { order_no: orderNo, reason: 'Cancelled from the sandbox dashboard' } });
    if (body?.success === false) throw new ApiError('POST', '/v1/order/cancel', 200, body);
    return body?.message ?? 'Order cancelled';
  });
  return html`<section>
    <p><a href="#/orders">← Orders</a></p>
    <h1>Order ${orderNo}</h1>
    <${ErrorBox} error=${state.error} />
    ${order && html`
      ${mayWrite() && html`<div class="actions" aria-busy=${action.busy ? 'true' : 'false'}>
        <button type="button" disabled=${action.busy || !can.generate} onClick=${generate}>Generate AWB now</button>
        <button type="button" disabled=${action.busy || !can.advance} onClick=${advance}>Advance to next step</button>
        <button type="button" class="danger" disabled=${action.busy || !can.cancel} onClick=${cancel}>Cancel order</button>
      </div>
      ${can.why && html`<p class="muted">${can.why}</p>`}`}
      <${Result} result=${action.result} />
      <div class="columns">
        <section><h2>Details</h2><${Details} order=${order} /></section>
        <${Timeline} order=${order} />
      </div>
      <${Tracking} awb=${order.awb} version=${`${order.status}:${order.history.length}`} />`}
  </section>`;
}
