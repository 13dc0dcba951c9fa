// The hosted payment page's script (docs/hosted-page.md). A plain ES module with no build step and
// no third-party code, except ethers, served from this origin and loaded only when the buyer
// chooses to pay with a browser wallet. Every view is already in the HTML (rendered by the server
// from the strings file); this script shows one at a time and fills in values, always as text.

const boot = JSON.parse(document.getElementById('cg-boot').textContent);
const S = boot.strings;
const INVOICE = boot.invoiceId;
const PAYMENT_WINDOW_MS = 30 * 60_000;
const REDIRECT_DELAY_MS = 3000;
/** How long a confirmations view the polls skipped (a fast chain) is shown before the result. */
const CONFIRMED_PAUSE_MS = 1500;
const LIVE = new Set(boot.liveStatuses);

const $ = (slot) => document.querySelector(`[data-slot="${slot}"]`);
const views = [...document.querySelectorAll('[data-view]')];

const state = {
  invoice: null,
  payment: null,
  /** Server clock minus this device's clock, from each response's timestamp: countdowns follow the server. */
  clockOffset: 0,
  view: 'loading',
  pollTimer: 0,
  tickTimer: 0,
  invoiceTimer: 0,
  choosePoll: 0,
  copy: { amount: '', address: '', token: '' },
  /** Per payment id, the page details (price, rate, settlement) once fetched. */
  details: new Map(),
  /** The payment whose confirmations view was shown. */
  confirmShown: null,
  walletBusy: false,
  walletTx: null,
};

function t(key, values = {}) {
  return S[key].replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

const serverNow = () => Date.now() + state.clockOffset;

function announce(text) {
  const live = $('announce');
  live.textContent = '';
  // A fresh node change makes screen readers repeat an identical message.
  setTimeout(() => { live.textContent = text; }, 50);
}

function show(name, focus = true) {
  for (const view of views) view.hidden = view.dataset.view !== name;
  const changed = state.view !== name;
  state.view = name;
  const cancelBar = $('cancel-bar');
  if (cancelBar) cancelBar.hidden = name === 'confirming' || name === 'success';
  if (focus && changed) document.querySelector(`[data-view="${name}"] .view-title`)?.focus();
}

function formatDuration(ms) {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const pad = (n) => String(n).padStart(2, '0');
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  return hours > 0 ? t('timeHours', { hours, minutes: pad(minutes), seconds: pad(seconds) }) : t('time', { minutes, seconds: pad(seconds) });
}

function chainInfo(slug) {
  return boot.chains[slug] ?? { name: slug, label: slug, testnet: false, family: 'unknown', chainId: null, pollMs: 5000, web3: false };
}

/** The network a payment is on (a testnet payment has its own label, block time and contract), never guessed from mainnet. */
function paymentNetwork(p) {
  const info = boot.networks?.[`${p.blockchain}:${p.network}`] ?? chainInfo(p.blockchain);
  return p.networkLabel ? { ...info, label: p.networkLabel } : info;
}

// ---------------------------------------------------------------------------------------------
// The checkout API

async function api(method, path, body) {
  let res;
  try {
    res = await fetch(boot.apiBase + path, {
      method,
      headers: body === undefined ? { Accept: 'application/json' } : { Accept: 'application/json', 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch {
    return { ok: false, status: 0, code: 'NETWORK', message: '', retryAfter: 0 };
  }
  let json = null;
  try {
    json = await res.json();
  } catch {
    json = null;
  }
  const serverTime = Date.parse(json?.timestamp ?? '');
  if (!Number.isNaN(serverTime)) state.clockOffset = serverTime - Date.now();
  if (res.ok && json?.success) return { ok: true, status: res.status, data: json.data };
  return {
    ok: false,
    status: res.status,
    code: json?.error?.code ?? `HTTP_${res.status}`,
    message: json?.error?.message ?? '',
    retryAfter: Number(res.headers.get('Retry-After')) || 0,
  };
}

/** The page's own read of a payment (price, rate and, once settled, how the amount compares); null when it cannot be had. */
async function loadDetails(id, fresh = false) {
  if (!fresh && state.details.has(id)) return state.details.get(id);
  try {
    const res = await fetch(`${boot.qrBase}${encodeURIComponent(id)}/details`, { headers: { Accept: 'application/json' }, cache: 'no-store', credentials: 'omit' });
    if (!res.ok) return null;
    const details = await res.json();
    state.details.set(id, details);
    return details;
  } catch {
    return null;
  }
}

function stopTimers() {
  clearTimeout(state.pollTimer);
  clearInterval(state.tickTimer);
  clearInterval(state.invoiceTimer);
  clearTimeout(state.choosePoll);
}

// ---------------------------------------------------------------------------------------------
// Loading the invoice and resuming a payment in progress

async function start(focus) {
  stopTimers();
  const res = await api('GET', `/invoices/${INVOICE}`);
  if (!res.ok) return showApiError(res, focus);
  state.invoice = res.data;
  if (res.data.status === 'PAID') {
    const status = await api('GET', `/invoices/${INVOICE}/status`);
    return showSuccess(focus, status.ok && status.data.paymentId ? { id: status.data.paymentId } : null);
  }
  if (res.data.status === 'PAYMENT_PENDING') {
    const status = await api('GET', `/invoices/${INVOICE}/status`);
    if (!status.ok) return showApiError(status, focus);
    if (status.data.paymentId) {
      const payment = await api('GET', `/payments/${status.data.paymentId}/status`);
      if (!payment.ok) return showApiError(payment, focus);
      // The invoice moved on between the two reads (payment expired just now): start over.
      if (!LIVE.has(payment.data.status) && payment.data.status !== 'COMPLETED') return showChoose(focus);
      return onPayment(payment.data, focus);
    }
  }
  return showChoose(focus);
}

function showApiError(res, focus) {
  switch (res.code) {
    case 'INVOICE_EXPIRED':
      return showGone('expiredTitle', 'expiredText', focus);
    case 'INVOICE_CANCELLED':
      return showGone('cancelledTitle', 'cancelledText', focus);
    case 'INVOICE_NOT_FOUND':
      return showGone('notFoundTitle', 'notFoundText', focus);
  }
  $('error-text').textContent = errorText(res);
  show('error', focus);
}

function errorText(res) {
  if (res.code === 'NETWORK') return S.errorNetwork;
  if (res.code === 'RATE_LIMITED') return t('errorRateLimited', { seconds: res.retryAfter || 60 });
  return res.message || S.errorGeneric;
}

function showGone(titleKey, textKey, focus = true) {
  stopTimers();
  $('gone-title').textContent = S[titleKey];
  $('gone-text').textContent = S[textKey];
  show('gone', focus);
}

// ---------------------------------------------------------------------------------------------
// Choosing a network and a coin

function selected(name) {
  return document.querySelector(`input[name="${name}"]:checked`)?.value ?? null;
}

function option(name, value, title, detail, badgeClass, badgeText, tag) {
  const label = el('label', 'option');
  const input = el('input');
  input.type = 'radio';
  input.name = name;
  input.value = value;
  const badge = el('span', `badge ${badgeClass}`, badgeText);
  badge.setAttribute('aria-hidden', 'true');
  const text = el('span', 'option-text');
  const heading = el('span', 'option-title', title);
  if (tag) heading.append(' ', el('span', 'tag', tag));
  text.append(heading);
  if (detail) text.append(el('span', 'option-detail', detail));
  label.append(input, badge, text);
  return label;
}

function showChoose(focus) {
  const inv = state.invoice;
  const chains = inv.availableBlockchains.filter((slug) => boot.chains[slug]);
  const fieldset = $('chains');
  if (!fieldset.querySelector('input')) {
    for (const slug of chains) {
      const info = chainInfo(slug);
      // A test network is named as it is ("Ethereum devnet (local)") and marked, never passed off as the chain's mainnet.
      const title = info.testnet ? info.label : info.name;
      fieldset.append(option('chain', slug, title, inv.availableCurrencies[slug].join(' · '), `chain-${slug}`, info.name.slice(0, 1), info.testnet ? S.testNetwork : null));
    }
    if (chains.length === 1) fieldset.querySelector('input').checked = true;
  }
  if (chains.length === 0) chooseError(S.nothingAccepted);
  renderCoins();
  startInvoiceTimer();
  watchInvoice();
  show('choose', focus);
}

/** While the buyer chooses, a payment may be opened elsewhere (another tab, the merchant's server): follow it. */
function watchInvoice() {
  clearTimeout(state.choosePoll);
  state.choosePoll = setTimeout(async () => {
    if (state.view !== 'choose') return;
    const res = await api('GET', `/invoices/${INVOICE}/status`);
    if (state.view !== 'choose') return;
    if (res.ok && res.data.status !== 'OPEN') return start(true);
    watchInvoice();
  }, 5000);
}

function renderCoins() {
  const chain = selected('chain');
  const fieldset = $('coins');
  const previous = selected('coin');
  for (const node of fieldset.querySelectorAll('label')) node.remove();
  fieldset.hidden = !chain;
  if (chain) {
    const coins = state.invoice.availableCurrencies[chain] ?? [];
    for (const coin of coins) fieldset.append(option('coin', coin, coin, '', `coin-${coin}`, coin.slice(0, 1)));
    const keep = coins.includes(previous) ? previous : coins.length === 1 ? coins[0] : null;
    if (keep) fieldset.querySelector(`input[value="${keep}"]`).checked = true;
  }
  updateChooseButtons();
}

function hasWallet() {
  return typeof window.ethereum?.request === 'function';
}

function updateChooseButtons() {
  const chain = selected('chain');
  const ready = Boolean(chain && selected('coin'));
  $('continue').disabled = !ready;
  const wallet = $('wallet-start');
  wallet.hidden = !(chain && chainInfo(chain).web3 && hasWallet());
  wallet.disabled = !ready;
}

function chooseError(text) {
  const node = $('choose-error');
  node.textContent = text;
  node.hidden = !text;
}

function startInvoiceTimer() {
  clearInterval(state.invoiceTimer);
  const end = Date.parse(state.invoice.expiresAt);
  const tick = () => {
    const left = end - serverNow();
    if (left <= 0) return showGone('expiredTitle', 'expiredText');
    $('invoice-timer').textContent = t('invoiceExpiresIn', { time: formatDuration(left) });
  };
  tick();
  state.invoiceTimer = setInterval(tick, 1000);
}

async function checkout(method) {
  const blockchain = selected('chain');
  const cryptoCurrency = selected('coin');
  if (!blockchain || !cryptoCurrency) return;
  chooseError('');
  clearTimeout(state.choosePoll);
  const buttons = [$('continue'), $('wallet-start')];
  for (const b of buttons) b.disabled = true;
  $('choose-form').setAttribute('aria-busy', 'true');
  announce(S.starting);
  const res = await api('POST', `/invoices/${INVOICE}/checkout`, { blockchain, cryptoCurrency, method });
  $('choose-form').removeAttribute('aria-busy');
  if (res.ok) return onPayment(res.data.payment, true);
  updateChooseButtons();
  switch (res.code) {
    case 'PAYMENT_ALREADY_IN_PROGRESS':
    case 'INVOICE_NOT_AVAILABLE':
      // Another tab or device started a payment: show that one.
      announce(S.errorBusy);
      return start(true);
    case 'INVOICE_EXPIRED':
      return showGone('expiredTitle', 'expiredText');
    case 'NETWORK':
    case 'RATE_LIMITED':
      return chooseError(errorText(res));
    default:
      return chooseError(t('errorUnavailable', { message: res.message || res.code }));
  }
}

// ---------------------------------------------------------------------------------------------
// A payment: address, wallet, confirmations, and the end states

function onPayment(update, focus) {
  state.payment = state.payment?.id === update.id ? { ...state.payment, ...update } : update;
  const p = state.payment;
  switch (p.status) {
    case 'PENDING':
      if (p.method === 'direct') {
        if (!update.paymentAddress || Date.parse(p.expiresAt) <= serverNow()) return expirePayment();
        showPay(p, focus);
      } else if (p.method === 'web3') {
        showWallet(p, focus);
      } else {
        showConfirming(p, focus);
      }
      break;
    case 'PROCESSING':
    case 'CONFIRMING':
      clearInterval(state.tickTimer);
      showConfirming(p, focus);
      break;
    case 'COMPLETED':
      return showSuccess(focus, p);
    case 'EXPIRED':
      return expirePayment();
    default:
      stopTimers();
      return show('failed', focus);
  }
  schedulePoll(p);
}

function pollDelay(p) {
  const chain = paymentNetwork(p);
  // Money in flight on a fast chain: ask more often, so the confirmations are seen at all.
  return (p.status === 'PROCESSING' || p.status === 'CONFIRMING') && chain.confirmPollMs ? chain.confirmPollMs : chain.pollMs;
}

function schedulePoll(p, delay = pollDelay(p)) {
  clearTimeout(state.pollTimer);
  state.pollTimer = setTimeout(() => poll(p.id), delay);
}

async function poll(id) {
  const res = await api('GET', `/payments/${id}/status`);
  if (state.payment?.id !== id) return;
  if (res.ok) return onPayment(res.data, true);
  if (res.code === 'PAYMENT_NOT_FOUND') return start(true);
  // Network trouble or a rate limit: keep the page as it is and ask again later.
  schedulePoll(state.payment, Math.max(res.retryAfter * 1000, pollDelay(state.payment)));
}

function startCountdown(p, timerSlot, progressSlot) {
  clearInterval(state.tickTimer);
  clearInterval(state.invoiceTimer);
  const end = Date.parse(p.expiresAt);
  const begin = p.createdAt ? Date.parse(p.createdAt) : end - PAYMENT_WINDOW_MS;
  const progress = $(progressSlot);
  progress.max = Math.max(1, end - begin);
  const tick = () => {
    const left = end - serverNow();
    if (left <= 0) return expirePayment();
    $(timerSlot).textContent = t('timeLeft', { time: formatDuration(left) });
    progress.value = left;
    progress.classList.toggle('low', left < 5 * 60_000);
  };
  tick();
  state.tickTimer = setInterval(tick, 1000);
}

function showPay(p, focus) {
  const chain = paymentNetwork(p);
  $('crypto-amount').textContent = p.amount;
  $('crypto-coin').textContent = p.cryptoCurrency;
  $('address').textContent = p.paymentAddress;
  state.copy = { amount: p.amount, address: p.paymentAddress, token: p.tokenAddress ?? '' };
  showToken(p, chain);
  void showPrice(p);
  const qr = $('qr');
  const qrSrc = `${boot.qrBase}${encodeURIComponent(p.id)}/qr.svg`;
  if (qr.getAttribute('src') !== qrSrc) qr.src = qrSrc;
  const uri = $('uri');
  const walletUri = p.paymentUri && p.paymentUri !== p.paymentAddress ? p.paymentUri : null;
  uri.hidden = !walletUri;
  uri.href = walletUri ?? '#';
  $('no-uri').hidden = Boolean(walletUri) || chain.family !== 'tron';
  $('chain-dot').className = `chain-dot chain-${p.blockchain}`;
  // The payment's own network: a testnet payment says so ("Ethereum Sepolia"), never "mainnet".
  const label = chain.label;
  $('network-name').textContent = t('networkIs', { network: label });
  $('network-test').hidden = !chain.testnet;
  $('network-warning').textContent = t('networkWarning', { coin: p.cryptoCurrency, network: label });
  if (state.view !== 'pay') startCountdown(p, 'pay-timer', 'pay-progress');
  show('pay', focus);
}

/** The token the buyer must pick in the wallet: its contract, mint or jetton master, shortened, with a copy button. */
function showToken(p, chain) {
  const row = $('token');
  row.hidden = !p.tokenAddress;
  if (!p.tokenAddress) return;
  const key = chain.family === 'solana' ? 'tokenMint' : chain.family === 'ton' ? 'jettonMaster' : 'tokenContract';
  $('token-label').textContent = t(key, { coin: p.cryptoCurrency });
  const node = $('token-address');
  const a = p.tokenAddress;
  node.textContent = a.length > 16 ? `${a.slice(0, 8)}…${a.slice(-6)}` : a;
  node.title = a;
}

/** The fiat value of the amount and the rate it was priced at, with the rate's source. */
async function showPrice(p) {
  const details = await loadDetails(p.id);
  if (state.payment?.id !== p.id) return;
  const box = $('price');
  const price = details?.price;
  box.hidden = !price;
  if (!price) return;
  $('price-line').textContent = t('priceLine', { fiat: price.fiatValue, rate: price.rate });
  const at = price.at ? new Date(price.at) : null;
  const time = at && !Number.isNaN(at.getTime()) ? at.toLocaleTimeString(S.lang, { hour: '2-digit', minute: '2-digit' }) : '';
  $('rate-source').textContent = time ? t('rateFrom', { source: price.source, time }) : price.source;
}

/** Takes the deposit address out of the page (not just out of sight). */
function clearAddress() {
  $('address').textContent = '';
  $('crypto-amount').textContent = '';
  $('token-address').textContent = '';
  $('token').hidden = true;
  $('price').hidden = true;
  $('qr').removeAttribute('src');
  const uri = $('uri');
  uri.href = '#';
  uri.hidden = true;
  state.copy = { amount: '', address: '', token: '' };
}

/** The countdown reached zero (or the server says so): the address goes away for good. */
function expirePayment() {
  stopTimers();
  clearAddress();
  show('expired-payment');
}

function showConfirming(p, focus) {
  // Money is on its way: the address is not needed any more, and must not outlive expiresAt.
  clearAddress();
  state.confirmShown = p.id;
  const required = p.requiredConfirmations;
  const count = Math.min(p.confirmations, required);
  $('confirmations').textContent = t('confirmations', { count, required });
  const progress = $('confirm-progress');
  progress.max = Math.max(1, required);
  progress.value = count;
  const hash = p.transactionHash ?? state.walletTx;
  $('confirm-tx').hidden = !hash;
  $('confirm-tx-hash').textContent = hash ?? '';
  show('confirming', focus);
}

/**
 * COMPLETED (or an invoice already PAID). A chain faster than the polls may complete before the
 * confirmations were ever shown: they are shown, full, for a moment first. Then the result, which
 * says so when the amount that arrived is not the one asked (spec rule 10: the payment is settled
 * and the merchant reconciles): short of it, the page says what is missing and does not move on to
 * the shop by itself; over it, that the extra arrived too. Only an exact payment redirects.
 */
async function showSuccess(focus = true, p = null) {
  stopTimers();
  clearAddress();
  const tx = p?.transactionHash ?? state.walletTx;
  if (p && p.requiredConfirmations && tx && state.confirmShown !== p.id) {
    showConfirming({ ...p, confirmations: p.requiredConfirmations, transactionHash: tx }, focus);
    await new Promise((resolve) => setTimeout(resolve, CONFIRMED_PAUSE_MS));
  }
  const details = p ? await loadDetails(p.id, true) : null;
  const settlement = details?.settlement ?? null;
  const inv = state.invoice;
  const merchant = inv?.merchant?.name ?? '';
  const target = safeUrl(inv?.returnUrl);
  const values = settlement ? { received: details.receivedAmount, expected: details.expectedAmount, difference: settlement.difference, coin: details.cryptoCurrency, merchant } : {};
  const kind = settlement?.kind ?? 'exact';
  $('success-title').textContent = kind === 'underpaid' ? S.underpaidTitle : kind === 'overpaid' ? S.overpaidTitle : S.successTitle;
  // Short of the amount is a warning, not a tick: the same sign as the server's page for it.
  $('success-icon').hidden = kind === 'underpaid';
  $('short-icon').hidden = kind !== 'underpaid';
  const redirect = kind === 'exact' && target;
  $('success-text').textContent = kind === 'underpaid' ? t('underpaidText', values) : kind === 'overpaid' ? t('overpaidText', values) : redirect ? t('successRedirect', { merchant }) : S.successNoRedirect;
  const link = $('return-link');
  link.hidden = !target;
  if (target) link.href = target;
  show('success', focus);
  if (redirect) setTimeout(() => window.location.assign(target), REDIRECT_DELAY_MS);
}

function safeUrl(value) {
  if (!value) return null;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Paying with an injected EIP-1193 wallet through the payment contract (method web3)

const ERC20_ABI = ['function allowance(address owner, address spender) view returns (uint256)', 'function approve(address spender, uint256 amount) returns (bool)'];
const GATEWAY_ABI = ['function pay(bytes32 externalId, address token, uint256 amount) payable'];

function showWallet(p, focus) {
  const chain = paymentNetwork(p);
  $('wallet-amount').textContent = `${p.amount} ${p.cryptoCurrency}`;
  $('wallet-chain-dot').className = `chain-dot chain-${p.blockchain}`;
  $('wallet-network-name').textContent = t('networkIs', { network: chain.label });
  $('wallet-network-test').hidden = !chain.testnet;
  const steps = p.tokenAddress ? t('walletStepsToken', { amount: p.amount, coin: p.cryptoCurrency }) : S.walletStepsNative;
  $('wallet-intro').textContent = t('walletIntro', { steps });
  const button = $('wallet-pay');
  button.hidden = Boolean(state.walletTx) || !hasWallet();
  button.disabled = state.walletBusy;
  if (!hasWallet()) walletError(S.walletUnavailable);
  if (state.view !== 'wallet') startCountdown(p, 'wallet-timer', 'wallet-progress');
  show('wallet', focus);
}

function walletStatus(text) {
  $('wallet-status').textContent = text;
}

function walletError(text) {
  const node = $('wallet-error');
  node.textContent = text;
  node.hidden = !text;
}

function walletErrorText(err, network) {
  const code = err?.code ?? err?.info?.error?.code ?? err?.error?.code;
  if (code === 4001 || code === 'ACTION_REJECTED') return S.walletRejected;
  if (code === 4902 || err?.wrongChain) return t('walletWrongChain', { network });
  const message = String(err?.shortMessage ?? err?.info?.error?.message ?? err?.message ?? err).slice(0, 200);
  return t('walletFailed', { message });
}

async function waitForReceipt(eth, hash) {
  for (let i = 0; i < 300; i++) {
    const receipt = await eth.request({ method: 'eth_getTransactionReceipt', params: [hash] });
    if (receipt) {
      if (receipt.status !== '0x1') throw new Error('the approval transaction failed');
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  throw new Error('the approval transaction was not mined in time');
}

async function walletPay() {
  const p = state.payment;
  if (!p || state.walletBusy || !hasWallet()) return;
  const eth = window.ethereum;
  const network = paymentNetwork(p).label;
  state.walletBusy = true;
  $('wallet-pay').disabled = true;
  walletError('');
  try {
    walletStatus(S.walletConnecting);
    const ethers = await import(boot.ethersUrl);
    const [account] = await eth.request({ method: 'eth_requestAccounts' });
    const wanted = BigInt(p.chainId);
    if (BigInt(await eth.request({ method: 'eth_chainId' })) !== wanted) {
      walletStatus(t('walletSwitching', { network }));
      await eth.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: `0x${wanted.toString(16)}` }] });
      if (BigInt(await eth.request({ method: 'eth_chainId' })) !== wanted) throw Object.assign(new Error('wrong chain'), { wrongChain: true });
    }
    // Created after the switch: ethers fixes a provider's network on first use.
    const provider = new ethers.BrowserProvider(eth);
    const signer = await provider.getSigner(account);
    const amount = ethers.parseUnits(p.amount, p.decimals);
    const token = p.tokenAddress ?? ethers.ZeroAddress;
    if (p.tokenAddress) {
      const erc20 = new ethers.Contract(p.tokenAddress, ERC20_ABI, provider);
      const allowance = await erc20.allowance(account, p.contractAddress);
      if (allowance < amount) {
        // Some tokens (USDT) refuse to change a non-zero allowance to another non-zero value.
        const approvals = allowance > 0n ? [0n, amount] : [amount];
        for (const value of approvals) {
          walletStatus(S.walletApproving);
          const hash = await signer.sendUncheckedTransaction({ to: p.tokenAddress, data: erc20.interface.encodeFunctionData('approve', [p.contractAddress, value]) });
          walletStatus(S.walletApprovalMining);
          await waitForReceipt(eth, hash);
        }
      }
    }
    walletStatus(S.walletPaying);
    const gateway = new ethers.Interface(GATEWAY_ABI);
    const hash = await signer.sendUncheckedTransaction({
      to: p.contractAddress,
      data: gateway.encodeFunctionData('pay', [p.externalId, token, amount]),
      value: p.tokenAddress ? 0n : amount,
    });
    state.walletTx = hash;
    $('wallet-tx-hash').textContent = hash;
    $('wallet-tx').hidden = false;
    $('wallet-pay').hidden = true;
    walletStatus(S.waiting);
    announce(S.walletSent);
    schedulePoll(p, 1000);
  } catch (err) {
    walletStatus('');
    walletError(walletErrorText(err, network));
    $('wallet-pay').disabled = false;
  } finally {
    state.walletBusy = false;
  }
}

// ---------------------------------------------------------------------------------------------
// Copy buttons

function copyByHand(slot) {
  const node = $(slot);
  const range = document.createRange();
  range.selectNodeContents(node);
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  }
}

async function copy(button) {
  const key = button.dataset.copy;
  const value = state.copy[key];
  if (!value) return;
  let ok = false;
  try {
    await navigator.clipboard.writeText(value);
    ok = true;
  } catch {
    ok = copyByHand({ amount: 'crypto-amount', address: 'address', token: 'token-address' }[key]);
  }
  button.textContent = ok ? S.copied : S.copy;
  button.classList.toggle('copied', ok);
  announce(ok ? S.copied : S.copyFailed);
  setTimeout(() => {
    button.textContent = S.copy;
    button.classList.remove('copied');
  }, 2000);
}

// ---------------------------------------------------------------------------------------------
// Wiring

$('chains').addEventListener('change', () => {
  chooseError('');
  renderCoins();
});
$('coins').addEventListener('change', updateChooseButtons);
$('choose-form').addEventListener('submit', (event) => {
  event.preventDefault();
  void checkout('direct');
});
$('wallet-start').addEventListener('click', () => void checkout('web3'));
$('wallet-pay').addEventListener('click', () => void walletPay());
for (const slot of ['restart', 'restart-failed', 'retry']) $(slot).addEventListener('click', () => void start(true));
for (const button of document.querySelectorAll('[data-copy]')) button.addEventListener('click', () => void copy(button));

// Wallets may inject their provider after the page has loaded.
window.addEventListener('ethereum#initialized', () => {
  if (state.view === 'choose') updateChooseButtons();
}, { once: true });

// Back in view after a while (phone locked, tab switched): ask at once instead of waiting.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && state.payment && LIVE.has(state.payment.status) && state.view !== 'expired-payment') {
    schedulePoll(state.payment, 0);
  }
});
window.addEventListener('pageshow', (event) => {
  if (event.persisted) void start(false);
});

void start(false);
