import type { AttentionItem, Overview, PeriodTotals } from '../../app/dashboard-overview.ts';
import type { InvoiceDetail, PaymentDetail, TimelineEntry } from '../../app/invoice-timeline.ts';
import { html, safeHref, type Html } from './html.ts';
import { page, type Layout } from './pages.ts';

// The overview and the invoice detail (docs/dashboard.md#overview, #invoice-detail). Every value a
// merchant or buyer supplied (order ids, customer fields, metadata, webhook URLs) goes through the
// escaping `html` tag; links to explorers pass safeHref.

/** An ISO time as people read it, in UTC. */
function when(iso: string | null): Html {
  if (!iso) return html`—`;
  return html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}</time>`;
}

function facts(list: { label: string; value: string }[]): Html {
  if (list.length === 0) return html``;
  return html`<dl class="facts">${list.map((f) => html`<dt>${f.label}</dt><dd class="bidi">${f.value}</dd>`)}</dl>`;
}

function periodTable(title: string, id: string, t: PeriodTotals): Html {
  return html`<section class="card" aria-labelledby="${id}"><h2 id="${id}">${title}</h2>
${t.coins.length === 0 ? html`<p>Nothing received.</p>` : html`<div class="scroll" tabindex="0" role="region" aria-label="${title} per coin"><table><thead><tr><th scope="col">Coin</th><th scope="col">Chain</th><th scope="col" class="num">Received</th><th scope="col" class="num">Payments</th></tr></thead><tbody>
${t.coins.map((c) => html`<tr><td>${c.cryptoCurrency}</td><td>${c.blockchain}${c.network === 'MAINNET' ? '' : ` (${c.network})`}</td><td class="num">${c.amount}</td><td class="num">${c.payments}</td></tr>`)}
</tbody></table></div>`}
<p class="fiat-total">At the rates priced: ${t.fiat.length === 0 ? '—' : t.fiat.map((f, i) => html`${i ? ', ' : ''}<strong>${f.amount} ${f.currency}</strong>`)}${t.unpriced ? html` <span class="hint">(${t.unpriced} payment(s) without a rate)</span>` : ''}</p>
</section>`;
}

const KIND_WORDS: Record<AttentionItem['kind'], string> = {
  underpaid: 'Underpaid',
  overpaid: 'Overpaid',
  late_funds: 'Late funds',
  stuck: 'Stuck confirming',
  webhook_failing: 'Webhook failing',
  indexer_failing: 'Indexer failing',
  indexer_behind: 'Indexer behind',
  pool_low: 'Pool low',
};

function attentionItem(a: AttentionItem): Html {
  return html`<li class="attention" data-kind="${a.kind}"${a.paymentId ? html` data-payment="${a.paymentId}"` : ''}>
<p><span class="tag">${KIND_WORDS[a.kind]}</span> <strong>${a.summary}</strong>${a.at ? html` <span class="hint">${when(a.at)}</span>` : ''}</p>
${facts(a.facts)}
<p><a href="${safeHref(a.action.href)}">${a.action.label}</a> <span class="hint">· docs: <code>${a.help}</code></span></p>
</li>`;
}

export function overviewPage(l: Layout, o: Overview): Html {
  return page(l, html`<p class="hint">For the points you may see. Days and months are UTC; amounts at the rate each payment was priced at when it was opened. As of ${when(o.generatedAt)}.</p>
<div class="totals">
${periodTable('Received today', 'today', o.today)}
${periodTable('Received this month', 'month', o.month)}
</div>
<section class="card" aria-labelledby="open"><h2 id="open">Open invoices</h2><p><strong id="open-invoices">${o.openInvoices}</strong> open or being paid. <a href="/dashboard/invoices">All invoices</a></p></section>
<section class="card" aria-labelledby="attention"><h2 id="attention">Needs attention</h2>
${o.attention.length === 0 ? html`<p class="ok" id="all-clear">Nothing needs attention.</p>` : html`<ul class="attention-list">${o.attention.map(attentionItem)}</ul>`}
</section>
<section class="card" id="indexers" aria-labelledby="indexers-h"><h2 id="indexers-h">Indexers and wallet pools</h2>
<p>The operator checks indexers with <code>chaingate status</code> (failing since when, and why; lag and last poll) and seeds a pool running low with <code>chaingate wallets seed --chain CHAIN --xpub … --count N</code>.</p></section>`);
}

function money(p: PaymentDetail): Html {
  const coin = p.cryptoCurrency;
  const row = (label: string, amount: string, fiat: string | undefined) => html`<tr><th scope="row">${label}</th><td class="num">${amount} ${coin}</td><td class="num">${fiat === undefined ? '—' : `${fiat} ${p.fiat!.currency}`}</td></tr>`;
  return html`<div class="scroll" tabindex="0" role="region" aria-label="Amounts of ${p.referenceId}"><table class="amounts"><thead><tr><th scope="col"><span class="hint">Amount</span></th><th scope="col" class="num">Coin</th><th scope="col" class="num">At the priced rate</th></tr></thead><tbody>
${row('Expected', p.expected, p.fiat?.expected)}
${row('Received', p.received, p.fiat?.received)}
${row('Difference', p.difference, p.fiat?.difference)}
</tbody></table></div>
<p class="hint">${p.fiat ? `Rate: 1 ${coin} = ${p.fiat.rate} ${p.fiat.currency}${p.fiat.source ? ` (${p.fiat.source})` : ''}` : 'No rate: the amount was not converted (verbatim pricing).'}</p>`;
}

const OUTCOME_WORDS: Record<PaymentDetail['outcome'], string> = { nothing: 'nothing received', underpaid: 'underpaid', exact: 'paid exactly', overpaid: 'overpaid' };

function paymentCard(p: PaymentDetail): Html {
  return html`<section class="card payment" id="payment-${p.id}" aria-labelledby="payment-${p.id}-h"><h3 id="payment-${p.id}-h">${p.referenceId} · ${p.status} · <span class="outcome" data-outcome="${p.outcome}">${OUTCOME_WORDS[p.outcome]}</span></h3>
<dl class="facts">
<dt>Chain</dt><dd>${p.cryptoCurrency} on ${p.blockchain}${p.isTestnet ? ` (${p.network})` : ''}</dd>
<dt>Address</dt><dd><code>${p.address}</code></dd>
<dt>Confirmations</dt><dd>${p.confirmations} of ${p.requiredConfirmations}</dd>
<dt>Transaction</dt><dd>${p.transactionHash ? (p.transactionUrl ? html`<a href="${safeHref(p.transactionUrl)}" rel="noreferrer"><code>${p.transactionHash}</code></a>` : html`<code>${p.transactionHash}</code>`) : '—'}</dd>
<dt>Opened</dt><dd>${when(p.createdAt)}</dd>
<dt>Completed</dt><dd>${when(p.completedAt)}</dd>
</dl>
${money(p)}
${p.refundUrl ? html`<p><a class="action" href="${p.refundUrl}">Refund…</a></p>` : ''}
</section>`;
}

function timelineItem(e: TimelineEntry): Html {
  return html`<li class="event${e.tone ? ` ${e.tone}-event` : ''}" data-type="${e.type}"${e.paymentId ? html` data-payment="${e.paymentId}"` : ''}>
<p>${when(e.at)} <strong>${e.summary}</strong></p>
${facts(e.facts)}
${e.link ? html`<p><a href="${safeHref(e.link.href)}" rel="noreferrer">${e.link.label}</a></p>` : ''}
</li>`;
}

function json(value: unknown): Html {
  return html`<pre class="json">${JSON.stringify(value ?? {}, null, 2)}</pre>`;
}

export function invoicePage(l: Layout, d: InvoiceDetail): Html {
  const inv = d.invoice;
  return page(l, html`<section class="card" aria-labelledby="invoice-h"><h2 id="invoice-h">Invoice</h2>
<dl class="facts">
<dt>Status</dt><dd id="invoice-status">${inv.status}</dd>
<dt>Amount</dt><dd>${inv.amountText} ${inv.currency}</dd>
<dt>Order</dt><dd class="bidi">${inv.orderId}</dd>
<dt>Description</dt><dd class="bidi">${inv.description || '—'}</dd>
<dt>Point</dt><dd><a class="bidi" href="${d.point.url}">${d.point.name}</a> · <a href="${d.point.webhooksUrl}">webhook deliveries</a></dd>
<dt>Id</dt><dd><code>${inv.id}</code></dd>
<dt>Created</dt><dd>${when(inv.createdAt)}</dd>
<dt>Expires</dt><dd>${when(inv.expiresAt)}</dd>
<dt>Return URL</dt><dd class="bidi">${inv.returnUrl ?? '—'}</dd>
</dl></section>
<section class="card" aria-labelledby="customer-h"><h2 id="customer-h">Customer</h2>
<dl class="facts"><dt>Name</dt><dd class="bidi" id="customer-name">${inv.customerName ?? '—'}</dd><dt>Email</dt><dd class="bidi" id="customer-email">${inv.customerEmail ?? '—'}</dd></dl>
<h3>Customer metadata</h3>${json(inv.customerMetadata)}
<h3>Metadata</h3>${json(inv.metadata)}
</section>
<section aria-labelledby="payments-h"><h2 id="payments-h">Payments</h2>
${d.payments.length === 0 ? html`<p>No checkout yet.</p>` : d.payments.map(paymentCard)}
</section>
<section class="card" aria-labelledby="timeline-h"><h2 id="timeline-h">Timeline</h2>
<ol class="timeline" id="timeline">${d.timeline.map(timelineItem)}</ol>
</section>`);
}
