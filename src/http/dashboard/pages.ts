import type { DashboardPoint, TestEventResult } from '../../app/dashboard-points.ts';
import type { UserView } from '../../app/dashboard-users.ts';
import type { DashboardPrincipal } from '../../app/dashboard-session.ts';
import { can, isAdmin, ROLES, type Role } from '../../domain/dashboard-roles.ts';
import type { AuditRow } from '../../app/dashboard-audit.ts';
import { html, raw, safeHref, type Html } from './html.ts';

// The dashboard's pages, rendered on the server. No inline script or style (strict CSP); the one
// script is assets/dashboard.js. Buttons a role may not use are left out, and the use cases refuse
// them anyway.

export interface Layout {
  title: string;
  principal: DashboardPrincipal | null;
  /** The session's CSRF token, or the pre-session one (sign-in, set-up). */
  csrf: string;
  assets: { css: string; js: string };
}

export function page(l: Layout, body: Html): Html {
  const p = l.principal;
  const full = p?.stage === 'full';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<meta name="robots" content="noindex, nofollow">
<meta name="csrf-token" content="${l.csrf}">
<title>${l.title} · chaingate dashboard</title>
<link rel="stylesheet" href="${l.assets.css}">
<script src="${l.assets.js}" defer></script>
</head>
<body>
<header class="top">
<span class="brand">chaingate</span>
${full ? html`<nav aria-label="Main"><ul>
<li><a href="/dashboard/overview">Overview</a></li>
<li><a href="/dashboard/points">Points</a></li>
<li><a href="/dashboard/invoices">Invoices</a></li>
<li><a href="/dashboard/sweeps">Refunds and sweeps</a></li>
${isAdmin(p.grants) ? html`<li><a href="/dashboard/users">Users</a></li>` : ''}
${p.grants.some((g) => g.role === 'owner') ? html`<li><a href="/dashboard/audit">Audit log</a></li>` : ''}
${p.grants.some((g) => can(g.role, 'export')) ? html`<li><a href="/dashboard/reports">Reports</a></li>` : ''}
<li><a href="/dashboard/account">Account</a></li>
</ul></nav>` : ''}
${p ? html`<div class="who"><span class="bidi">${p.email}</span>${form('/dashboard/api/sign-out', l.csrf, html`<button class="secondary" type="submit">Sign out</button>`, 'inline')}</div>` : ''}
</header>
<main id="main">
<h1>${l.title}</h1>
${body}
</main>
</body>
</html>`;
}

export function form(action: string, csrf: string, inner: Html, cls = 'card'): Html {
  return html`<form class="${cls}" method="post" action="${action}"><input type="hidden" name="_csrf" value="${csrf}">${inner}</form>`;
}

export function notice(text: string | null | undefined, ok = true): Html {
  return text ? html`<p class="${ok ? 'ok' : 'error'}" role="${ok ? 'status' : 'alert'}">${text}</p>` : html``;
}

export function signInPage(l: Layout, message: string | null): Html {
  return page(l, html`${notice(message, false)}
${form('/dashboard/api/sign-in', l.csrf, html`<h2>With your password</h2>
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>`)}
<section class="card" data-needs-js hidden><h2>With a passkey</h2>
<p class="hint">No password needed once a passkey is set up.</p>
<button type="button" data-action="passkey-sign-in" data-status="passkey-status">Sign in with a passkey</button>
<p id="passkey-status" role="status"></p></section>`);
}

export function secondFactorPage(l: Layout, message: string | null): Html {
  return page(l, html`${notice(message, false)}
${form('/dashboard/api/second-factor', l.csrf, html`<label for="code">Code from your authenticator app, or a recovery code</label>
<input id="code" name="code" autocomplete="one-time-code" inputmode="text" required>
<button type="submit">Continue</button>`)}
<section class="card" data-needs-js hidden><h2>Or use a passkey</h2>
<button type="button" data-action="passkey-sign-in" data-status="passkey-status">Use a passkey</button>
<p id="passkey-status" role="status"></p></section>`);
}

export function setupPage(l: Layout, token: string, valid: boolean, message: string | null): Html {
  if (!valid) return page(l, html`<p class="error" role="alert">This set-up link was used already or has expired. Ask the operator for a new one (<code>chaingate users reset-2fa</code>).</p>`);
  return page(l, html`${notice(message, false)}
${form('/dashboard/api/setup', l.csrf, html`<input type="hidden" name="token" value="${token}">
<p class="hint">Choose a password of at least 12 characters. Next you set up a second factor.</p>
<label for="password">New password</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="12" required>
<label for="confirm">The same again</label><input id="confirm" name="confirm" type="password" autocomplete="new-password" minlength="12" required>
<button type="submit">Set password</button>`)}`);
}

export function enrolPage(l: Layout, totp: { secret: string; sealed: string; qrSvg: string } | null, message: string | null): Html {
  return page(l, html`${notice(message, false)}
<p>A second factor is needed before any page: an authenticator app (TOTP), a passkey, or both.</p>
${totp ? form('/dashboard/api/totp', l.csrf, html`<h2>Authenticator app</h2>
<div class="qr" role="img" aria-label="QR code of the TOTP secret">${raw(totp.qrSvg)}</div>
<p>Or type this key: <code class="secret" id="totp-secret">${totp.secret}</code></p>
<input type="hidden" name="sealed" value="${totp.sealed}">
<label for="code">The 6-digit code it shows</label><input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required>
<button type="submit">Turn on TOTP</button>`) : ''}
<section class="card" data-needs-js hidden><h2>Passkey</h2>
<label for="passkey-name">Name of this passkey</label><input id="passkey-name" value="passkey">
<button type="button" data-action="passkey-enrol" data-status="passkey-status">Add a passkey</button>
<p id="passkey-status" role="status"></p></section>`);
}

export function recoveryCodesPage(l: Layout, codes: string[]): Html {
  return page(l, html`<p class="ok" role="status">TOTP is on.</p>
<section class="card"><h2>Recovery codes</h2>
<p>Each works once instead of a TOTP code. They are shown only now: keep them somewhere safe.</p>
<ul class="codes" id="recovery-codes">${codes.map((c) => html`<li>${c}</li>`)}</ul>
<p><a href="/dashboard/overview">Continue to the dashboard</a></p></section>`);
}

function chainsFieldset(offered: { slug: string; name: string; coins: string[] }[], point: Omit<DashboardPoint, 'role'> | null, disabled: boolean): Html {
  const chainOn = (slug: string) => !point?.acceptedChains || point.acceptedChains.includes(slug);
  const coinOn = (slug: string, coin: string) => chainOn(slug) && (!point?.acceptedCurrencies?.[slug] || point.acceptedCurrencies[slug]!.includes(coin));
  return html`<fieldset><legend>Accepted chains and coins</legend>
<p class="hint">Only the chains this deployment offers.</p>
${offered.map((c) => html`<fieldset><legend><label><input type="checkbox" name="accepted" value="${c.slug}" ${chainOn(c.slug) ? raw('checked') : ''} ${disabled ? raw('disabled') : ''}> ${c.name}</label></legend>
${c.coins.map((coin) => html`<label class="inline"><input type="checkbox" name="accepted" value="${c.slug}:${coin}" ${coinOn(c.slug, coin) ? raw('checked') : ''} ${disabled ? raw('disabled') : ''}> ${coin}</label> `)}</fieldset>`)}
</fieldset>`;
}

export function pointsPage(l: Layout, points: DashboardPoint[], offered: { slug: string; name: string; coins: string[] }[]): Html {
  const admin = l.principal ? isAdmin(l.principal.grants) : false;
  return page(l, html`<section class="card"><h2>Your merchant points</h2>
${points.length === 0 ? html`<p>No point yet.</p>` : html`<div class="scroll" tabindex="0" role="region" aria-label="Merchant points"><table><thead><tr><th scope="col">Name</th><th scope="col">Your role</th><th scope="col">Status</th><th scope="col">Webhook URL</th></tr></thead><tbody>
${points.map((p) => html`<tr><td><a class="bidi" href="/dashboard/points/${p.id}">${p.name}</a></td><td>${p.role}</td><td>${p.active ? 'active' : 'disabled'}</td><td class="bidi">${p.webhookUrl ?? '—'}</td></tr>`)}
</tbody></table></div>`}
</section>
${admin ? form('/dashboard/api/points', l.csrf, html`<h2>Create a point</h2>
<label for="name">Name shown to buyers</label><input id="name" name="name" required maxlength="255">
<label for="webhookUrl">Webhook URL (optional)</label><input id="webhookUrl" name="webhookUrl" type="url" placeholder="https://shop.example/chaingate/webhook">
${chainsFieldset(offered, null, false)}
<button type="submit">Create point</button>`) : ''}`);
}

export function secretShownPage(l: Layout, point: Omit<DashboardPoint, 'role'>, apiSecret: string, rotated: boolean): Html {
  return page(l, html`<section class="card">
<p class="ok" role="status">${rotated ? 'The secret was rotated: the old one no longer signs anything.' : 'The point was created.'}</p>
<p>Store the API secret now: it is shown only this once.</p>
<dl><dt>Point</dt><dd class="bidi">${point.name}</dd><dt>API key</dt><dd><code class="secret" id="api-key">${point.apiKey}</code>
<button type="button" class="secondary" data-action="copy" data-copy="api-key" data-status="copy-status">Copy key</button></dd>
<dt>API secret</dt><dd><code class="secret" id="api-secret">${apiSecret}</code>
<button type="button" class="secondary" data-action="copy" data-copy="api-secret" data-status="copy-status">Copy secret</button></dd></dl>
<p id="copy-status" role="status"></p>
<p><a href="/dashboard/points/${point.id}">Go to the point</a></p></section>`);
}

export function pointPage(l: Layout, point: DashboardPoint, offered: { slug: string; name: string; coins: string[] }[], extra: { saved?: boolean; test?: TestEventResult | null }): Html {
  const role: Role = point.role;
  const settings = can(role, 'settings');
  return page(l, html`${extra.saved ? notice('Saved.') : ''}
${extra.test ? html`<section class="card" id="test-result" role="status"><h2>Test event</h2>
<p class="${extra.test.delivered ? 'ok' : 'error'}">${extra.test.delivered ? 'Delivered' : 'Not delivered'}: ${extra.test.statusCode === null ? (extra.test.error ?? 'no answer') : `HTTP ${extra.test.statusCode}`} in ${extra.test.durationMs} ms to <span class="bidi">${extra.test.url ?? ''}</span></p></section>` : ''}
<section class="card"><h2>Point</h2><dl>
<dt>Name</dt><dd class="bidi" id="point-name">${point.name}</dd>
<dt>Status</dt><dd>${point.active ? 'active' : 'disabled'}</dd>
<dt>API key</dt><dd><code>${point.apiKey}</code></dd>
<dt>Webhook URL</dt><dd>${point.webhookUrl ? html`<a class="bidi" rel="noreferrer" href="${safeHref(point.webhookUrl)}">${point.webhookUrl}</a>` : '—'}</dd>
<dt>Webhooks</dt><dd><a href="/dashboard/points/${point.id}/webhooks">Delivery log</a></dd>
<dt>Your role</dt><dd>${role}</dd></dl></section>
${settings ? form(`/dashboard/api/points/${point.id}`, l.csrf, html`<h2>Settings</h2>
<label for="name">Name</label><input id="name" name="name" value="${point.name}" required maxlength="255">
<label for="webhookUrl">Webhook URL (empty: none)</label><input id="webhookUrl" name="webhookUrl" type="url" value="${point.webhookUrl ?? ''}">
${chainsFieldset(offered, point, false)}
<button type="submit">Save</button>`) : ''}
${settings && point.webhookUrl ? form(`/dashboard/api/points/${point.id}/test-event`, l.csrf, html`<h2>Webhook</h2><p>Sends a signed <code>ping</code> event now and shows the answer.</p><button type="submit" class="secondary">Send test event</button>`) : ''}
${can(role, 'secrets') ? form(`/dashboard/api/points/${point.id}/rotate`, l.csrf, html`<h2>Rotate the API secret</h2>
<p>The new secret is in force at once for request signing and webhooks; the old one stops working (no overlap).</p>
<label for="confirm-name">Type the point's name to confirm</label><input id="confirm-name" name="confirm" autocomplete="off" required>
<button type="submit" class="danger">Rotate secret</button>`) : ''}
${settings ? form(`/dashboard/api/points/${point.id}/active`, l.csrf, html`<h2>${point.active ? 'Disable' : 'Enable'}</h2>
<input type="hidden" name="active" value="${point.active ? 'false' : 'true'}">
<p>${point.active ? 'A disabled point refuses every API request (API_KEY_INVALID).' : 'Accept this point’s API requests again.'}</p>
<button type="submit" class="${point.active ? 'danger' : ''}">${point.active ? 'Disable point' : 'Enable point'}</button>`) : ''}`);
}

export function usersPage(l: Layout, users: UserView[], points: DashboardPoint[], invited: { email: string; link: string } | null): Html {
  return page(l, html`${invited ? html`<section class="card" role="status"><p class="ok">${invited.email} was invited. Send them this set-up link (single use, 24 h); it is shown only now:</p>
<code class="secret" id="setup-link">${invited.link}</code><button type="button" class="secondary" data-action="copy" data-copy="setup-link" data-status="copy-status">Copy link</button><p id="copy-status" role="status"></p></section>` : ''}
<section class="card"><h2>Users</h2><div class="scroll" tabindex="0" role="region" aria-label="Users"><table><thead><tr><th scope="col">Email</th><th scope="col">Roles</th><th scope="col">Second factor</th><th scope="col">Status</th><th scope="col"><span class="hint">Action</span></th></tr></thead><tbody>
${users.map((u) => html`<tr><td class="bidi">${u.email}</td><td>${u.grants.map((g) => `${g.role} on ${g.pointId === '*' ? 'every point' : (points.find((p) => p.id === g.pointId)?.name ?? g.pointId)}`).join(', ')}</td>
<td>${[u.totp ? 'TOTP' : '', u.passkeys ? `${u.passkeys} passkey(s)` : ''].filter(Boolean).join(', ') || (u.setupPending ? 'set-up pending' : 'none')}</td><td>${u.active ? 'active' : 'disabled'}</td>
<td>${l.principal?.userId === u.id ? '' : form(`/dashboard/api/users/${u.id}/active`, l.csrf, html`<input type="hidden" name="active" value="${u.active ? 'false' : 'true'}"><button class="secondary" type="submit">${u.active ? 'Disable' : 'Enable'}</button>`, 'inline')}</td></tr>`)}
</tbody></table></div></section>
${form('/dashboard/api/users', l.csrf, html`<h2>Invite a user</h2>
<label for="email">Email</label><input id="email" name="email" type="email" required>
<label for="role">Role</label><select id="role" name="role">${ROLES.map((r) => html`<option value="${r}">${r}</option>`)}</select>
<fieldset><legend>Points (none ticked: every point)</legend>${points.map((p) => html`<label><input type="checkbox" name="points" value="${p.id}"> <span class="bidi">${p.name}</span></label>`)}</fieldset>
<button type="submit">Invite</button>`)}`);
}

export function auditPage(l: Layout, rows: AuditRow[]): Html {
  return page(l, html`<section class="card"><div class="scroll" tabindex="0" role="region" aria-label="Audit log"><table><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Point</th><th scope="col">From</th></tr></thead><tbody>
${rows.map((r) => html`<tr><td>${r.at}</td><td class="bidi">${r.actor}</td><td>${r.action}</td><td>${r.pointId ?? '—'}</td><td>${r.ip ?? '—'} <span class="hint bidi">${r.userAgent ?? ''}</span></td></tr>`)}
</tbody></table></div></section>`);
}

export function accountPage(l: Layout, info: { hasTotp: boolean; passkeys: number; recoveryLeft: number }, message: string | null): Html {
  return page(l, html`${notice(message)}
<section class="card"><h2>Second factors</h2><p>TOTP: ${info.hasTotp ? `on (${info.recoveryLeft} recovery codes left)` : 'off'}. Passkeys: ${info.passkeys}.</p>
<p><a href="/dashboard/enrol">Add a passkey or set up TOTP again</a></p></section>
${form('/dashboard/api/password', l.csrf, html`<h2>Change password</h2>
<p class="hint">Every other session of yours ends.</p>
<label for="current">Current password</label><input id="current" name="current" type="password" autocomplete="current-password" required>
<label for="password">New password</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="12" required>
<label for="confirm">The same again</label><input id="confirm" name="confirm" type="password" autocomplete="new-password" minlength="12" required>
<button type="submit">Change password</button>`)}`);
}

export function messagePage(l: Layout, text: string, back: string | null): Html {
  return page(l, html`<p class="error" role="alert">${text}</p>${back ? html`<p><a href="${back}">Back</a></p>` : ''}`);
}
