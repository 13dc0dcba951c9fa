// The dashboard's progressive script (served from this origin; the CSP allows no inline script):
// copy buttons, and passkey enrolment and sign-in through navigator.credentials. Without it every
// page still works except passkeys.


function b64urlToBytes(s) {
  const pad = s.length % 4 === 0 ? '' : '='.repeat(4 - (s.length % 4));
  const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/') + pad);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function bytesToB64url(buf) {
  const bytes = new Uint8Array(buf);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function csrf() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.getAttribute('content') : '';
}

async function post(url, body) {
  const res = await fetch(url, { method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf() }, body: JSON.stringify(body) });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(data.error?.message || `HTTP ${res.status}`);
  return data;
}

function say(el, text, ok) {
  if (!el) return;
  el.textContent = text;
  el.className = ok ? 'ok' : 'error';
}

async function enrolPasskey(button) {
  const status = document.getElementById(button.dataset.status);
  try {
    const options = await post('/dashboard/api/passkeys/options', {});
    const publicKey = {
      ...options,
      challenge: b64urlToBytes(options.challenge),
      user: { ...options.user, id: b64urlToBytes(options.user.id) },
      excludeCredentials: (options.excludeCredentials || []).map((c) => ({ ...c, id: b64urlToBytes(c.id) })),
    };
    const cred = await navigator.credentials.create({ publicKey });
    const response = {
      id: cred.id,
      rawId: bytesToB64url(cred.rawId),
      type: cred.type,
      clientExtensionResults: cred.getClientExtensionResults(),
      authenticatorAttachment: cred.authenticatorAttachment || undefined,
      response: {
        clientDataJSON: bytesToB64url(cred.response.clientDataJSON),
        attestationObject: bytesToB64url(cred.response.attestationObject),
        transports: cred.response.getTransports ? cred.response.getTransports() : [],
      },
    };
    const name = document.getElementById('passkey-name');
    const done = await post('/dashboard/api/passkeys', { name: name ? name.value : 'passkey', response });
    say(status, 'Passkey added.', true);
    if (done.redirect) window.location.assign(done.redirect);
  } catch (err) {
    say(status, `The passkey was not added: ${err.message}`, false);
  }
}

async function passkeySignIn(button) {
  const status = document.getElementById(button.dataset.status);
  try {
    const options = await post('/dashboard/api/passkey-sign-in/options', {});
    const publicKey = { ...options, challenge: b64urlToBytes(options.challenge), allowCredentials: (options.allowCredentials || []).map((c) => ({ ...c, id: b64urlToBytes(c.id) })) };
    const cred = await navigator.credentials.get({ publicKey });
    const response = {
      id: cred.id,
      rawId: bytesToB64url(cred.rawId),
      type: cred.type,
      clientExtensionResults: cred.getClientExtensionResults(),
      authenticatorAttachment: cred.authenticatorAttachment || undefined,
      response: {
        clientDataJSON: bytesToB64url(cred.response.clientDataJSON),
        authenticatorData: bytesToB64url(cred.response.authenticatorData),
        signature: bytesToB64url(cred.response.signature),
        userHandle: cred.response.userHandle ? bytesToB64url(cred.response.userHandle) : undefined,
      },
    };
    const done = await post('/dashboard/api/passkey-sign-in', { response });
    window.location.assign(done.redirect);
  } catch (err) {
    say(status, `Passkey sign-in failed: ${err.message}`, false);
  }
}

document.addEventListener('click', (event) => {
  const target = event.target instanceof Element ? event.target.closest('button[data-action]') : null;
  if (!target) return;
  const action = target.dataset.action;
  if (action === 'copy') {
    const from = document.getElementById(target.dataset.copy);
    if (from && navigator.clipboard) navigator.clipboard.writeText(from.textContent || '').then(() => say(document.getElementById(target.dataset.status), 'Copied.', true), () => {});
  } else if (action === 'passkey-enrol') {
    event.preventDefault();
    void enrolPasskey(target);
  } else if (action === 'passkey-sign-in') {
    event.preventDefault();
    void passkeySignIn(target);
  }
});

for (const el of document.querySelectorAll('[data-needs-js]')) el.hidden = !window.PublicKeyCredential;

// Invoices and payments (pages-invoices.ts): the list follows changes without a reload. Every
// second it asks the changes endpoint (data-live) for rows changed since its cursor; a changed row
// on the page is swapped for the server's markup, a row that no longer matches the filter leaves,
// and on the newest-first first page (data-insert="top") a new matching row is put in its place.
function followInvoices(table) {
  const body = table.tBodies[0];
  const status = document.querySelector('[data-live-status]');
  const limit = Number(table.dataset.limit) || 50;
  let cursor = table.dataset.cursor;
  let busy = false;
  const newer = (a, b) => Number(a.dataset.created) > Number(b.dataset.created) || (a.dataset.created === b.dataset.created && a.dataset.id > b.dataset.id);
  function place(tr) {
    const rows = [...body.rows];
    const before = rows.find((r) => newer(tr, r));
    if (before) body.insertBefore(tr, before);
    else if (rows.length < limit) body.appendChild(tr);
    else return false;
    while (body.rows.length > limit) body.deleteRow(-1);
    const empty = document.getElementById('no-rows');
    if (empty) empty.remove();
    return true;
  }
  async function poll() {
    if (busy || document.hidden) return;
    busy = true;
    try {
      const res = await fetch(`${table.dataset.live}${table.dataset.live.includes('?') ? '&' : '?'}since=${encodeURIComponent(cursor)}`, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
      if (!res.ok) {
        if (status) status.textContent = `Live updates paused (HTTP ${res.status}); reload the page.`;
        return;
      }
      const data = await res.json();
      cursor = data.cursor;
      let changed = 0;
      for (const row of data.rows) {
        const existing = [...body.rows].find((r) => r.dataset.id === row.id);
        if (!row.matches) {
          if (existing) {
            existing.remove();
            changed++;
          }
          continue;
        }
        const tpl = document.createElement('template');
        tpl.innerHTML = row.html.trim();
        const tr = tpl.content.firstElementChild;
        if (!tr) continue;
        if (existing) {
          if (existing.outerHTML !== tr.outerHTML) {
            existing.replaceWith(tr);
            changed++;
          }
        } else if (table.dataset.insert === 'top' && place(tr)) {
          changed++;
        }
      }
      if (changed && status) status.textContent = `Updated at ${new Date().toLocaleTimeString()}.`;
    } catch {
      // a failed poll is retried on the next tick
    } finally {
      busy = false;
    }
  }
  setInterval(poll, 1000);
}

const invoiceTable = document.getElementById('invoice-table');
if (invoiceTable?.dataset.live) followInvoices(invoiceTable);
// Refunds and sweeps: a plan whose transactions are on their way reloads its page to show serve's follow-up.
if (document.querySelector('[data-reload-while="pending"]')) setTimeout(() => window.location.reload(), 3000);
