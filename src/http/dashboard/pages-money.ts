import type { MoneyPlanDetail, MoneyPlanView, RefundForm, RefundPageData, SweepForm, SweepsPageData } from '../../app/dashboard-money.ts';
import { formatUnits } from '../../domain/money.ts';
import { html, type Html } from './html.ts';
import { form, notice, page, type Layout } from './pages.ts';

// Refunds and sweeps (docs/dashboard.md#refunds-and-sweeps): the refund form of a payment, the
// page of one plan (download, the offline command, upload, its transactions), and the list of
// plans. Buttons appear only for a role that may move money; the use cases refuse the rest.

const coins = (atomic: bigint | string, decimals: number, symbol: string) => `${formatUnits(BigInt(atomic), decimals)} ${symbol}`;

function stateBadge(state: string): Html {
  return html`<span class="state state-${state.toLowerCase()}">${state}</span>`;
}

export function refundPage(l: Layout, d: RefundPageData, message: string | null, values: RefundForm | null): Html {
  const p = d.payment;
  const fmt = (v: bigint) => coins(v, p.decimals, p.cryptoCurrency);
  const over = d.offer.overPayment;
  return page(l, html`${notice(message, false)}
<section class="card"><h2>Payment</h2><dl>
<dt>Payment</dt><dd><code>${p.id}</code></dd>
<dt>Status</dt><dd>${stateBadge(p.status)}</dd>
<dt>Chain</dt><dd>${p.blockchain} ${p.network}</dd>
<dt>Expected</dt><dd>${p.expectedAmount} ${p.cryptoCurrency}</dd>
<dt>Received</dt><dd>${fmt(d.offer.received)}</dd>
<dt>Refunds cover</dt><dd>${fmt(d.offer.committed)}</dd>
<dt>Deposit</dt><dd><code class="bidi">${p.address}</code></dd></dl></section>
<section class="card"><h2>Refunds</h2>
${d.refunds.length === 0 ? html`<p>None yet.</p>` : html`<div class="scroll" tabindex="0" role="region" aria-label="Refunds of this payment"><table><thead><tr><th scope="col">State</th><th scope="col">Amount</th><th scope="col">To</th><th scope="col">Transaction</th><th scope="col">Plan</th></tr></thead><tbody>
${d.refunds.map((r) => html`<tr><td>${stateBadge(r.stateLabel)}</td><td>${coins(r.amount, r.decimals, r.symbol)}</td><td><code class="bidi">${r.toAddress}</code></td><td>${r.txid ? html`<code>${r.txid}</code>` : '—'}</td><td><a href="/dashboard/plans/${r.planId}">${r.planId.slice(0, 16)}…</a></td></tr>`)}
</tbody></table></div>`}</section>
${d.canAct && p.status !== 'REFUNDED' ? form(`/dashboard/api/payments/${p.id}/refund`, l.csrf, html`<h2>Plan a refund</h2>
<p class="hint">The server makes the plan; you sign it offline with <code>chaingate sweep sign</code> and upload the signed file. No key comes here.</p>
<label for="to">Buyer's ${p.blockchain} address</label><input id="to" name="to" required autocomplete="off" spellcheck="false" value="${values?.to ?? ''}">
<label for="amount">Amount in ${p.cryptoCurrency} (empty: the over-payment${over ? `, ${fmt(over)}` : ''})</label>
<input id="amount" name="amount" inputmode="decimal" autocomplete="off" placeholder="${over ? formatUnits(over, p.decimals) : ''}" value="${values?.amount ?? ''}" aria-describedby="amount-hint">
<p class="hint" id="amount-hint">At most ${fmt(d.offer.left > 0n ? d.offer.left : 0n)}.</p>
<label for="feePayer">Fee payer (optional: an account of the same wallet that pays the fees)</label><input id="feePayer" name="feePayer" autocomplete="off" spellcheck="false" value="${values?.feePayer ?? ''}">
<label for="fromAddress">Pay from a wallet address instead of the deposit (optional: after the deposit was swept)</label><input id="fromAddress" name="fromAddress" autocomplete="off" spellcheck="false" value="${values?.fromAddress ?? ''}">
<button type="submit">Plan refund</button>`) : ''}`);
}

function txTable(v: Pick<MoneyPlanView, 'txs'>): Html {
  if (v.txs.length === 0) return html`<p>Not broadcast yet.</p>`;
  return html`<div class="scroll" tabindex="0" role="region" aria-label="Transactions"><table><thead><tr><th scope="col">Transaction</th><th scope="col">Hash</th><th scope="col">Status</th><th scope="col">Error</th></tr></thead><tbody>
${v.txs.map((t) => html`<tr><td>${t.txKey}</td><td><code>${t.txid}</code></td><td>${stateBadge(t.status)}</td><td>${t.error ?? ''}</td></tr>`)}
</tbody></table></div>`;
}

export function planPage(l: Layout, d: MoneyPlanDetail, message: { text: string; ok: boolean } | null): Html {
  const open = d.state === 'PLANNED';
  // While the transactions are on their way, the page reloads itself (dashboard.js) to show serve's follow-up.
  const following = d.state === 'PENDING';
  return page(l, html`${message ? notice(message.text, message.ok) : ''}
<section class="card"${following ? html` data-reload-while="pending"` : ''}><h2>State</h2>
<p id="plan-state">${stateBadge(d.state)}${following ? html` <span class="hint">serve follows it to finality; this page refreshes.</span>` : ''}</p>
<dl><dt>Kind</dt><dd>${d.kind}</dd>
<dt>Chain</dt><dd>${d.chain} ${d.network}</dd>
${d.refund ? html`<dt>Payment</dt><dd><a href="/dashboard/payments/${d.refund.paymentId}/refund">${d.refund.paymentId}</a></dd>
<dt>Refund</dt><dd>${coins(d.refund.amount, d.refund.decimals, d.refund.symbol)} (${d.refund.state})</dd>` : ''}
<dt>To</dt><dd><code class="bidi">${d.to}</code></dd>
<dt>Plan</dt><dd><code>${d.id}</code></dd></dl>
<pre class="summary">${d.summary}</pre>
${txTable(d)}</section>
${d.canAct && open ? html`<section class="card"><h2>1. Download the plan</h2>
<p><a class="button" href="/dashboard/api/plans/${d.id}/file" download="${d.fileName}">Download ${d.fileName}</a></p>
<h2>2. Sign it offline</h2>
<p>On the offline machine that holds the wallet secret:</p>
<code class="secret" id="sign-command">${d.signCommand}</code>
<button type="button" class="secondary" data-action="copy" data-copy="sign-command" data-status="copy-status">Copy command</button><p id="copy-status" role="status"></p></section>` : ''}
${d.canAct && (open || d.state === 'FAILED') ? html`<form class="card" method="post" action="/dashboard/api/plans/${d.id}/signed" enctype="multipart/form-data"><input type="hidden" name="_csrf" value="${l.csrf}">
<h2>${open ? '3. Upload the signed file and broadcast' : 'Broadcast again'}</h2>
<p class="hint">The file is checked against this plan (its transactions, keys and hashes) before anything is sent.</p>
<label for="signed">Signed file</label><input id="signed" name="signed" type="file" accept=".json,application/json" required>
<button type="submit">Upload and broadcast</button></form>` : ''}
${d.canAct && open ? form(`/dashboard/api/plans/${d.id}/cancel`, l.csrf, html`<h2>Cancel</h2><p>Gives back what the plan reserved; its signed file will be refused.</p><button type="submit" class="danger">Cancel plan</button>`) : ''}`);
}

export function sweepsPage(l: Layout, d: SweepsPageData, message: { text: string; ok: boolean } | null, values: SweepForm | null): Html {
  return page(l, html`${message ? notice(message.text, message.ok) : ''}
<section class="card"><h2>Plans</h2>
${d.plans.length === 0 ? html`<p>No refund or sweep plan yet.</p>` : html`<div class="scroll" tabindex="0" role="region" aria-label="Refund and sweep plans"><table><thead><tr><th scope="col">Created</th><th scope="col">Kind</th><th scope="col">Chain</th><th scope="col">State</th><th scope="col">To</th><th scope="col">Plan</th></tr></thead><tbody>
${d.plans.map((p) => html`<tr><td>${p.createdAt.toISOString()}</td><td>${p.kind}${p.paymentId ? html` of <a href="/dashboard/payments/${p.paymentId}/refund">${p.paymentId}</a>` : ''}</td><td>${p.chain} ${p.network}</td><td>${stateBadge(p.state)}</td><td><code class="bidi">${p.to}</code></td><td><a href="/dashboard/plans/${p.id}">${p.id.slice(0, 16)}…</a></td></tr>`)}
</tbody></table></div>`}</section>
${d.canSweep ? form('/dashboard/api/sweeps', l.csrf, html`<h2>Plan a sweep</h2>
<p class="hint">Empties the deposits whose payments ended into your cold wallet. You sign the plan offline.</p>
<label for="chain">Chain</label><select id="chain" name="chain">${d.chains.map((c) => html`<option value="${c.slug}"${values?.chain === c.slug ? html` selected` : ''}>${c.name}</option>`)}</select>
<label class="inline"><input type="checkbox" name="testnet" value="true"${values?.testnet ? html` checked` : ''}> its testnet</label>
<label for="to">Cold wallet address</label><input id="to" name="to" required autocomplete="off" spellcheck="false" value="${values?.to ?? ''}">
<label for="feePayer">Fee payer (optional)</label><input id="feePayer" name="feePayer" autocomplete="off" spellcheck="false" value="${values?.feePayer ?? ''}">
<label for="min">Leave deposits holding less than (optional: an amount of the native coin, or SYMBOL=amount, comma-separated)</label><input id="min" name="min" autocomplete="off" value="${values?.min ?? ''}">
<button type="submit">Plan sweep</button>`) : ''}`);
}
