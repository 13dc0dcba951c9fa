import type { TestEventResult } from '../../app/dashboard-points.ts';
import type { LogAttempt, LogDelivery, LogEvent, WebhookLog } from '../../app/dashboard-webhooks.ts';
import { html, safeHref, type Html } from './html.ts';
import { form, notice, page, type Layout } from './pages.ts';

// A point's webhooks page: the endpoint and its "failing since" state, the test event, and the log
// of events, deliveries and attempts with Redeliver. Request and response bodies are shown as text
// in <pre> (escaped by the html tag): a receiver's answer is whatever it chose to send.

/** `2026-11-28T15:40:12.345Z` as `2026-11-28 15:40:12 UTC`, in a <time> element. */
function when(isoTime: string | null): Html {
  if (!isoTime) return html`—`;
  return html`<time datetime="${isoTime}">${isoTime.slice(0, 10)} ${isoTime.slice(11, 19)} UTC</time>`;
}

function endpointCard(log: WebhookLog): Html {
  const e = log.endpoint;
  let state: Html;
  if (!e.url) state = html`<p id="endpoint-state">No webhook URL: events are recorded but not sent.</p>`;
  else if (e.failingSince) {
    state = html`<p id="endpoint-state" class="error failing">Failing since ${when(e.failingSince)}: ${e.failedAttempts} failed attempt${e.failedAttempts === 1 ? '' : 's'}; last 2xx answer ${e.lastSuccessAt ? when(e.lastSuccessAt) : 'never'}.</p>`;
  } else if (e.lastSuccessAt) state = html`<p id="endpoint-state" class="ok">Working: last 2xx answer ${when(e.lastSuccessAt)}.</p>`;
  else state = html`<p id="endpoint-state">No attempt to this URL yet.</p>`;
  return html`<section class="card"><h2>Endpoint</h2>
<p>${e.url ? html`<a class="bidi" rel="noreferrer" href="${safeHref(e.url)}">${e.url}</a>` : '—'}</p>
${state}
<p class="hint">A failed attempt is one without a 2xx answer in time; a 2xx answer clears the state.</p>
<p><a href="/dashboard/points/${log.point.id}">Back to the point</a></p></section>`;
}

function statusOf(a: LogAttempt): Html {
  if (a.statusCode !== null) return html`<span class="${a.ok ? 'ok' : 'error'}">HTTP ${a.statusCode}</span>`;
  return html`<span class="error">${a.error ?? 'no answer'}</span>`;
}

function attemptItem(a: LogAttempt): Html {
  // A list of small grids rather than a table: five facts and a body that stay readable at 390 px.
  const size = a.responseBody === null ? 0 : a.responseBody.length;
  return html`<li><dl class="attempt">
<div><dt>Attempt</dt><dd>${a.number ?? '—'}</dd></div>
<div><dt>Time</dt><dd>${when(a.at)}</dd></div>
<div><dt>Answer</dt><dd>${statusOf(a)}</dd></div>
<div><dt>Duration</dt><dd>${a.durationMs} ms</dd></div>
<div><dt>Next retry</dt><dd>${when(a.nextRetryAt)}</dd></div>
</dl>
${size ? html`<details><summary>Response body (${size} character${size === 1 ? '' : 's'}, first 2 KB)</summary><pre class="body">${a.responseBody}</pre></details>` : html`<p class="hint">Empty response body</p>`}</li>`;
}

function deliveryBlock(l: Layout, log: WebhookLog, event: LogEvent, d: LogDelivery, mayRedeliver: boolean): Html {
  return html`<div class="delivery" id="delivery-${d.id}">
<p><strong>Delivery <code>${d.id}</code></strong>: <span class="state state-${d.state.toLowerCase()}">${d.state}</span>${d.replayOf ? html` · redelivery of <a href="#delivery-${d.replayOf}"><code>${d.replayOf}</code></a>` : ''} · created ${when(d.createdAt)}${d.state === 'PENDING' ? html` · next attempt ${when(d.nextAttemptAt)}` : ''}</p>
${d.attempts.length === 0 ? html`<p class="hint">No attempt yet: the next running sender makes it.</p>` : html`<ol class="attempts" aria-label="Attempts of delivery ${d.id}">${d.attempts.map(attemptItem)}</ol>`}
${mayRedeliver ? form(`/dashboard/api/points/${log.point.id}/webhooks/redeliver`, l.csrf, html`<input type="hidden" name="delivery" value="${d.id}"><button type="submit" class="secondary" aria-label="Redeliver ${event.type} (delivery ${d.id})">Redeliver</button>`, 'inline') : ''}
</div>`;
}

function eventCard(l: Layout, log: WebhookLog, e: LogEvent): Html {
  // A replay is refused while a delivery of the event is still in progress.
  const busy = e.deliveries.some((d) => d.state === 'PENDING');
  const mayRedeliver = log.canAct && !!log.endpoint.url && !busy;
  return html`<section class="card hook-event" id="event-${e.id}">
<h3><code>${e.type}</code> <span class="hint">${when(e.createdAt)}</span></h3>
<p class="hint">Event <a href="/dashboard/points/${log.point.id}/webhooks?event=${e.id}"><code>${e.id}</code></a>${e.invoiceId ? html` · invoice <code>${e.invoiceId}</code>` : ''}${e.paymentId ? html` · payment <code>${e.paymentId}</code>` : ''}</p>
<details><summary>Request body</summary><pre class="body">${e.requestBody}</pre></details>
${e.deliveries.length === 0 ? html`<p class="hint">Never sent (no webhook URL at the time, or the event is not subscribed).</p>` : e.deliveries.map((d, i) => deliveryBlock(l, log, e, d, mayRedeliver && i === e.deliveries.length - 1))}
</section>`;
}

export function webhooksPage(l: Layout, log: WebhookLog, extra: { test?: TestEventResult | null; redelivered?: string | null; olderPage?: boolean }): Html {
  const base = `/dashboard/points/${log.point.id}/webhooks`;
  const t = extra.test;
  return page(l, html`${extra.redelivered ? notice(`Redelivery ${extra.redelivered} queued: the next running sender sends it.`) : ''}
${t ? html`<section class="card" id="test-result" role="status"><h2>Test event</h2>
<p class="${t.delivered ? 'ok' : 'error'}">${t.delivered ? 'Delivered' : 'Not delivered'}: ${t.statusCode === null ? (t.error ?? 'no answer') : `HTTP ${t.statusCode}`} in ${t.durationMs} ms (delivery <a href="#delivery-${t.deliveryId}"><code>${t.deliveryId}</code></a>).</p></section>` : ''}
${endpointCard(log)}
${log.canAct && log.endpoint.url ? form(`/dashboard/api/points/${log.point.id}/webhooks/test-event`, l.csrf, html`<h2>Test event</h2><p>Sends a signed <code>ping</code> event now; it shows in the log below.</p><button type="submit" class="secondary">Send test event</button>`) : ''}
<h2 id="log">Delivery log${log.eventId ? html` of event <code>${log.eventId}</code>` : ''}</h2>
${log.eventId ? html`<p><a href="${base}">The whole log</a></p>` : ''}
${log.events.length === 0 ? html`<p>No webhook event yet.</p>` : log.events.map((e) => eventCard(l, log, e))}
${log.next !== null || extra.olderPage ? html`<nav class="pager" aria-label="Log pages">${log.next !== null ? html`<a href="${base}?before=${log.next}">Older events</a>` : ''}${extra.olderPage ? html`<a href="${base}">Newest events</a>` : ''}</nav>` : ''}`);
}
