import { fiatExponent } from '../../domain/fiat-currencies.ts';
import { formatUnits } from '../../domain/money.ts';
import type { Strings } from './strings.en.ts';

// Server-side HTML of the hosted page: the app shell (every view is in the markup, hidden, and
// assets/page.js shows one at a time) and the whole-page states for unknown, expired, cancelled and
// paid invoices, which need no script at all. All text comes from the strings file and every
// interpolated value is HTML-escaped; no inline script or style is ever emitted (strict CSP).

export interface AssetUrls {
  css: string;
  js: string;
  icon: string;
}

export interface ShellInput {
  strings: Strings;
  assets: AssetUrls;
  merchantName: string;
  description: string;
  amount: string;
  currency: string;
  referenceId: string;
  cancelUrl: string | null;
  /** Notices shown above the card on every view (a demo, a test deployment); plain text. */
  banners?: readonly string[];
  /** Serialised into a JSON data block for page.js (not executed, so CSP allows it). */
  boot: unknown;
}

export interface MessageInput {
  strings: Strings;
  assets: AssetUrls;
  kind: 'not-found' | 'expired' | 'cancelled' | 'paid' | 'short' | 'error';
  title: string;
  text: string;
  link: { href: string; label: string } | null;
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Fills `{name}` placeholders: plain text in, plain text out. */
export function format(template: string, values: Record<string, string> = {}): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => (key in values ? values[key]! : whole));
}

/** The same, as HTML: the template and every value are escaped. */
export function fill(template: string, values: Record<string, string> = {}): string {
  return escapeHtml(format(template, values));
}

/** `2500` USD -> `$25.00`. Unknown currency codes (pricing.mode verbatim) are shown as given. */
export function formatFiat(amountMinor: string, currency: string, locale = 'en'): string {
  const exponent = fiatExponent(currency);
  if (exponent === undefined || !/^\d+$/.test(amountMinor)) return `${amountMinor} ${currency}`;
  const major = formatUnits(BigInt(amountMinor), exponent);
  try {
    const nf = new Intl.NumberFormat(locale, { style: 'currency', currency, minimumFractionDigits: exponent, maximumFractionDigits: exponent });
    // A numeric string keeps every digit (no float rounding of large amounts).
    return nf.format(major as unknown as number);
  } catch {
    return `${major} ${currency}`;
  }
}

/** JSON safe inside a <script type="application/json"> element. */
function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

function head(strings: Strings, assets: AssetUrls, title: string, withScript: boolean): string {
  return `<!doctype html>
<html lang="${escapeHtml(strings.lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="${escapeHtml(assets.icon)}" type="image/svg+xml">
<link rel="stylesheet" href="${escapeHtml(assets.css)}">
${withScript ? `<script type="module" src="${escapeHtml(assets.js)}"></script>\n` : ''}</head>`;
}

const LOCK_ICON = '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path d="M7 10V7a5 5 0 0 1 10 0v3h1a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2v-8a2 2 0 0 1 2-2h1zm2 0h6V7a3 3 0 0 0-6 0v3z"/></svg>';
const CHECK_ICON = '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path d="M9.5 16.2 5.3 12l-1.4 1.4 5.6 5.6 11-11-1.4-1.4z"/></svg>';
const CLOCK_ICON = '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path d="M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm0 18a8 8 0 1 1 0-16 8 8 0 0 1 0 16zm.5-13H11v6l5.2 3.1.8-1.2-4.5-2.7z"/></svg>';
const ALERT_ICON = '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path d="M1 21h22L12 2 1 21zm12-3h-2v-2h2v2zm0-4h-2v-4h2v4z"/></svg>';
const X_ICON = '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path d="M19 6.4 17.6 5 12 10.6 6.4 5 5 6.4 10.6 12 5 17.6 6.4 19 12 13.4 17.6 19 19 17.6 13.4 12z"/></svg>';
const SEARCH_ICON = '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path d="M15.5 14h-.8l-.3-.3A6.5 6.5 0 1 0 14 15.5l.3.3v.8l5 5 1.5-1.5-5-5zm-6 0a4.5 4.5 0 1 1 0-9 4.5 4.5 0 0 1 0 9z"/></svg>';

function topBar(strings: Strings): string {
  return `<header class="top"><span class="brand">${LOCK_ICON}${fill(strings.brand)}</span></header>`;
}

function poweredBy(strings: Strings): string {
  return `<footer class="powered">${fill(strings.poweredBy)}</footer>`;
}

function heading(text: string): string {
  return `<h2 class="view-title" tabindex="-1">${text}</h2>`;
}

/** Notices above the card, in a landmark of their own so that a screen reader's landmark list reaches them. */
function banners(strings: Strings, texts: readonly string[]): string {
  if (texts.length === 0) return '';
  const items = texts.map((text) => `<p class="banner" role="note" data-slot="banner">${ALERT_ICON}<span>${escapeHtml(text)}</span></p>`).join('\n');
  return `<aside class="banners" aria-label="${fill(strings.noticesLabel)}">\n${items}\n</aside>`;
}

/** The app shell for an invoice that can still be paid (OPEN or PAYMENT_PENDING). */
export function renderShell(input: ShellInput): string {
  const s = input.strings;
  const merchant = { merchant: input.merchantName };
  const cancel = input.cancelUrl
    ? `<footer class="card-foot" data-slot="cancel-bar"><a class="cancel" href="${escapeHtml(input.cancelUrl)}" rel="noreferrer">${fill(s.cancel, merchant)}</a></footer>`
    : '';
  return `${head(s, input.assets, format(s.pageTitle, merchant), true)}
<body>
<div class="shell">
${topBar(s)}
${banners(s, input.banners ?? [])}
<main class="card" id="main">
<section class="summary" aria-labelledby="merchant-name">
<p class="eyebrow">${fill(s.paidTo)}</p>
<h1 class="merchant" id="merchant-name">${escapeHtml(input.merchantName)}</h1>
${input.description ? `<p class="description">${escapeHtml(input.description)}</p>` : ''}
<p class="eyebrow">${fill(s.amountDue)}</p>
<p class="fiat"><span data-slot="fiat">${escapeHtml(formatFiat(input.amount, input.currency))}</span> <span class="fiat-code">${escapeHtml(input.currency)}</span></p>
<p class="ref">${fill(s.invoiceRef, { reference: input.referenceId })}</p>
</section>

<noscript><p class="notice">${fill(s.noScript)}</p></noscript>

<section class="view" data-view="loading" aria-busy="true">
<p class="muted center"><span class="spinner" aria-hidden="true"></span>${fill(s.loading)}</p>
</section>

<section class="view" data-view="choose" hidden>
${heading(fill(s.chooseTitle))}
<form data-slot="choose-form" novalidate>
<fieldset class="options" data-slot="chains"><legend>${fill(s.chooseNetwork)}</legend></fieldset>
<fieldset class="options coins" data-slot="coins" hidden><legend>${fill(s.chooseCoin)}</legend></fieldset>
<p class="alert" role="alert" data-slot="choose-error" hidden></p>
<div class="actions">
<button type="submit" class="button primary" data-slot="continue" disabled>${fill(s.continue)}</button>
<button type="button" class="button secondary" data-slot="wallet-start" hidden>${fill(s.payWithWallet)}</button>
</div>
</form>
<p class="muted small timer" data-slot="invoice-timer" role="timer" aria-live="off"></p>
</section>

<section class="view" data-view="pay" hidden>
${heading(fill(s.payTitle))}
<div class="pay-grid">
<div class="qr-box"><img class="qr" data-slot="qr" width="232" height="232" alt="${fill(s.qrAlt)}"></div>
<div class="pay-fields">
<div class="field">
<p class="field-label" id="amount-label">${fill(s.sendExactly)}</p>
<div class="copy-row"><p class="value amount"><code data-slot="crypto-amount"></code> <span class="coin" data-slot="crypto-coin"></span></p><button type="button" class="button copy" data-copy="amount" aria-label="${fill(s.copyAmount)}">${fill(s.copy)}</button></div>
</div>
<div class="field">
<p class="field-label" id="address-label">${fill(s.toAddress)}</p>
<div class="copy-row"><code class="value address" data-slot="address"></code><button type="button" class="button copy" data-copy="address" aria-label="${fill(s.copyAddress)}">${fill(s.copy)}</button></div>
</div>
<div class="field price" data-slot="price" hidden>
<p class="value" data-slot="price-line"></p>
<p class="muted small" data-slot="rate-source"></p>
</div>
<div class="field" data-slot="token" hidden>
<p class="field-label" data-slot="token-label"></p>
<div class="copy-row"><code class="value address" data-slot="token-address"></code><button type="button" class="button copy" data-copy="token" aria-label="${fill(s.copyToken)}">${fill(s.copy)}</button></div>
</div>
<p class="network-name"><span class="chain-dot" data-slot="chain-dot"></span><span data-slot="network-name"></span> <span class="tag" data-slot="network-test" hidden>${fill(s.testNetwork)}</span></p>
<a class="button secondary wallet-link" data-slot="uri" href="#" hidden>${fill(s.openInWallet)}</a>
<p class="muted small" data-slot="no-uri" hidden>${fill(s.tronNoUri)}</p>
</div>
</div>
<p class="warning" role="note">${ALERT_ICON}<span data-slot="network-warning"></span></p>
<p class="muted small">${fill(s.exactWarning)}</p>
<div class="countdown">
<p class="timer" role="timer" aria-live="off">${CLOCK_ICON}<span data-slot="pay-timer"></span></p>
<progress data-slot="pay-progress" max="1" value="1"></progress>
</div>
<p class="muted center waiting"><span class="spinner" aria-hidden="true"></span>${fill(s.waiting)}</p>
</section>

<section class="view" data-view="wallet" hidden>
${heading(fill(s.walletTitle))}
<div class="field">
<p class="field-label">${fill(s.sendExactly)}</p>
<p class="value amount" data-slot="wallet-amount"></p>
</div>
<p class="network-name"><span class="chain-dot" data-slot="wallet-chain-dot"></span><span data-slot="wallet-network-name"></span> <span class="tag" data-slot="wallet-network-test" hidden>${fill(s.testNetwork)}</span></p>
<p class="muted" data-slot="wallet-intro"></p>
<div class="actions"><button type="button" class="button primary" data-slot="wallet-pay">${fill(s.walletConnect)}</button></div>
<p class="status-line" data-slot="wallet-status" role="status"></p>
<p class="alert" role="alert" data-slot="wallet-error" hidden></p>
<div class="field" data-slot="wallet-tx" hidden><p class="field-label">${fill(s.walletSent)}</p><code class="value address" data-slot="wallet-tx-hash"></code></div>
<div class="countdown">
<p class="timer" role="timer" aria-live="off">${CLOCK_ICON}<span data-slot="wallet-timer"></span></p>
<progress data-slot="wallet-progress" max="1" value="1"></progress>
</div>
</section>

<section class="view" data-view="confirming" hidden>
${heading(fill(s.detectedTitle))}
<p class="confirmations" data-slot="confirmations" role="status"></p>
<progress class="confirm-progress" data-slot="confirm-progress" max="1" value="0"></progress>
<p class="muted">${fill(s.confirmationsHelp)}</p>
<div class="field" data-slot="confirm-tx" hidden><p class="field-label">${fill(s.txHash)}</p><code class="value address" data-slot="confirm-tx-hash"></code></div>
</section>

<section class="view state success" data-view="success" hidden>
<div class="state-icon ok" data-slot="success-icon">${CHECK_ICON}</div>
<div class="state-icon warn" data-slot="short-icon" hidden>${ALERT_ICON}</div>
${heading(`<span data-slot="success-title">${fill(s.successTitle)}</span>`)}
<p data-slot="success-text"></p>
<p><a class="button primary" data-slot="return-link" href="#" rel="noreferrer" hidden>${fill(s.returnNow, merchant)}</a></p>
</section>

<section class="view state" data-view="expired-payment" hidden>
<div class="state-icon warn">${CLOCK_ICON}</div>
${heading(fill(s.expiredPaymentTitle))}
<p>${fill(s.expiredPaymentText)}</p>
<div class="actions"><button type="button" class="button primary" data-slot="restart">${fill(s.startAgain)}</button></div>
</section>

<section class="view state" data-view="failed" hidden>
<div class="state-icon bad">${X_ICON}</div>
${heading(fill(s.failedTitle))}
<p>${fill(s.failedText)}</p>
<div class="actions"><button type="button" class="button primary" data-slot="restart-failed">${fill(s.startAgain)}</button></div>
</section>

<section class="view state" data-view="gone" hidden>
<div class="state-icon warn">${CLOCK_ICON}</div>
${heading('<span data-slot="gone-title"></span>')}
<p data-slot="gone-text"></p>
</section>

<section class="view state" data-view="error" hidden>
<div class="state-icon bad">${ALERT_ICON}</div>
${heading(fill(s.errorTitle))}
<p data-slot="error-text"></p>
<div class="actions"><button type="button" class="button primary" data-slot="retry">${fill(s.errorRetry)}</button></div>
</section>
${cancel}
</main>
${poweredBy(s)}
</div>
<p class="visually-hidden" aria-live="polite" data-slot="announce"></p>
<script type="application/json" id="cg-boot">${jsonForScript(input.boot)}</script>
</body>
</html>
`;
}

/** A whole page for an invoice that cannot be paid (or does not exist): no script needed. */
export function renderMessage(input: MessageInput): string {
  const s = input.strings;
  const icon = { 'not-found': SEARCH_ICON, expired: CLOCK_ICON, cancelled: X_ICON, paid: CHECK_ICON, short: ALERT_ICON, error: ALERT_ICON }[input.kind];
  const tone = { 'not-found': 'neutral', expired: 'warn', cancelled: 'warn', paid: 'ok', short: 'warn', error: 'bad' }[input.kind];
  const link = input.link ? `<p><a class="button primary" href="${escapeHtml(input.link.href)}" rel="noreferrer">${escapeHtml(input.link.label)}</a></p>` : '';
  return `${head(s, input.assets, input.title, false)}
<body>
<div class="shell">
${topBar(s)}
<main class="card" id="main">
<section class="view state" data-view="${input.kind}">
<div class="state-icon ${tone}">${icon}</div>
<h1 class="view-title">${escapeHtml(input.title)}</h1>
<p>${escapeHtml(input.text)}</p>
${link}
</section>
</main>
${poweredBy(s)}
</div>
</body>
</html>
`;
}
