import type { ResolvedNetwork } from '../../chains/registry.ts';
import type { Config } from '../../config/schema.ts';
import { ChainError } from '../../domain/errors.ts';
import { withoutCredentials } from '../../domain/http-url.ts';
import { parseUnits } from '../../domain/money.ts';
import { endpointOrigin, faultCause } from '../rpc-metrics.ts';

// What sweeps ask of a bitcoin node, on Esplora (REST) or Bitcoin Core (JSON-RPC): the deposits'
// unspent outputs, a fee rate, a broadcast and where a transaction stands. A command, unlike the
// indexer, gives up after a few tries and says why instead of retrying for ever; a node's refusal
// (HTTP 400 from Esplora, an RPC error from Core) is returned with the node's own message.

export interface Utxo {
  txid: string;
  vout: number;
  /** Satoshis. */
  value: bigint;
  confirmed: boolean;
}

export type TxState = { found: false } | { found: true; confirmations: number };

export interface BitcoinSweepApi {
  /** Unspent outputs per address (confirmed and, on Esplora, unconfirmed ones marked so). */
  utxos(addresses: string[]): Promise<Map<string, Utxo[]>>;
  /** Fee rate for confirmation within `target` blocks, sat/vB rounded up; null when the node has no estimate. */
  feeRate(target: number): Promise<bigint | null>;
  broadcast(hex: string): Promise<{ accepted: true; txid: string } | { accepted: false; error: string }>;
  txState(txid: string): Promise<TxState>;
  /** Whether an output is spent (in the chain or, on Esplora, the mempool); null when the node does not know the output. */
  isSpent(txid: string, vout: number): Promise<boolean | null>;
}

/** The node refused a request (not a transport fault): its message, verbatim. */
export class NodeRefusal extends ChainError {
  override readonly name = 'NodeRefusal';
}

const ATTEMPTS = 3;

/** JSON whose numbers named in `exact` keep their source text (amounts and fee rates are never floats here). */
function parseExact(text: string, exact: ReadonlySet<string> | 'all'): unknown {
  // JSON.parse source text access (Node 21+): the third argument holds each primitive's source.
  const reviver = (key: string, value: unknown, context?: { source?: string }) =>
    (exact === 'all' || exact.has(key)) && typeof value === 'number' && context?.source ? context.source : value;
  return JSON.parse(text, reviver as (this: unknown, key: string, value: unknown) => unknown);
}

async function withRetries<T>(what: string, origin: string, timeoutMs: number, attempt: () => Promise<T>): Promise<T> {
  let last = '';
  for (let n = 0; n < ATTEMPTS; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (err instanceof NodeRefusal) throw err;
      last = faultCause(err, timeoutMs);
      if (n + 1 < ATTEMPTS) await new Promise((r) => setTimeout(r, 250 * 2 ** n));
    }
  }
  throw new ChainError(`${what} at ${origin} failed ${ATTEMPTS} times: ${last}`);
}

export function createSweepApi(network: ResolvedNetwork, config: Config): BitcoinSweepApi {
  const timeoutMs = config.indexer.rpcTimeoutMs;
  return network.source === 'core' ? coreApi(network.rpcUrl, timeoutMs) : esploraApi(network.rpcUrl, timeoutMs);
}

/** A retryable HTTP answer (rate limit, server trouble) as opposed to a refusal. */
class Transient extends ChainError {}

function esploraApi(baseUrl: string, timeoutMs: number): BitcoinSweepApi {
  // User info in the URL travels as Basic auth: fetch refuses a URL carrying credentials.
  const { url: bare, authorization } = withoutCredentials(baseUrl);
  const base = bare.replace(/\/+$/, '');
  const origin = endpointOrigin(baseUrl);

  async function request(path: string, init: RequestInit = {}): Promise<{ status: number; text: string }> {
    return withRetries(`${init.method ?? 'GET'} ${path.replace(/[0-9a-f]{64}|[a-z0-9]{26,}/gi, ':id')}`, origin, timeoutMs, async () => {
      const headers = { ...(authorization ? { authorization } : {}), ...(init.headers as Record<string, string> | undefined) };
      const res = await fetch(base + path, { ...init, headers, signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
      const text = await res.text();
      if (res.status === 429 || res.status >= 500) throw new Transient(`HTTP ${res.status}: ${text.slice(0, 200)}`);
      return { status: res.status, text };
    });
  }

  async function json(path: string, exact: ReadonlySet<string> | 'all' = new Set()): Promise<unknown> {
    const { status, text } = await request(path);
    if (status !== 200) throw new NodeRefusal(`GET ${path} at ${origin}: HTTP ${status} ${text.slice(0, 200)}`);
    try {
      return parseExact(text, exact);
    } catch {
      throw new ChainError(`GET ${path} at ${origin}: the answer is not JSON`);
    }
  }

  return {
    async utxos(addresses) {
      const out = new Map<string, Utxo[]>();
      for (const address of addresses) {
        // Esplora GET /address/:address/utxo: [{txid, vout, status: {confirmed, block_height, …}, value}]
        const rows = await json(`/address/${address}/utxo`, new Set(['value']));
        if (!Array.isArray(rows)) throw new ChainError(`GET /address/…/utxo at ${origin}: expected a list`);
        out.set(
          address,
          rows.map((r: { txid?: unknown; vout?: unknown; value?: unknown; status?: { confirmed?: unknown } }) => {
            if (typeof r.txid !== 'string' || !/^[0-9a-f]{64}$/.test(r.txid) || typeof r.vout !== 'number' || typeof r.value !== 'string' || !/^\d+$/.test(r.value)) {
              throw new ChainError(`GET /address/…/utxo at ${origin}: malformed output`);
            }
            return { txid: r.txid, vout: r.vout, value: BigInt(r.value), confirmed: r.status?.confirmed === true };
          }),
        );
      }
      return out;
    },
    async feeRate(target) {
      // Esplora GET /fee-estimates: {"1": 87.882, "2": 87.882, …, "144": 1.027} in sat/vB by target blocks.
      const estimates = (await json('/fee-estimates', 'all')) as Record<string, unknown>;
      const targets = Object.keys(estimates)
        .map(Number)
        .filter((n) => Number.isInteger(n) && n >= target)
        .sort((a, b) => a - b);
      const chosen = targets[0] ?? Math.max(...Object.keys(estimates).map(Number).filter(Number.isInteger));
      const rate = estimates[String(chosen)];
      return typeof rate === 'string' ? ceilDecimal(rate) : null;
    },
    async broadcast(hex) {
      // Esplora POST /tx: the raw transaction as hex text; 200 with the txid, 400 with the node's reason.
      const { status, text } = await request('/tx', { method: 'POST', body: hex, headers: { 'content-type': 'text/plain' } });
      if (status === 200 && /^[0-9a-f]{64}$/.test(text.trim())) return { accepted: true, txid: text.trim() };
      return { accepted: false, error: text.trim().slice(0, 400) || `HTTP ${status}` };
    },
    async txState(txid) {
      // Esplora GET /tx/:txid/status: {"confirmed": true, "block_height": …} or {"confirmed": false}; 404 when unknown.
      const { status, text } = await request(`/tx/${txid}/status`);
      if (status === 404) return { found: false };
      if (status !== 200) throw new NodeRefusal(`GET /tx/…/status at ${origin}: HTTP ${status} ${text.slice(0, 200)}`);
      const st = JSON.parse(text) as { confirmed?: unknown; block_height?: unknown };
      if (st.confirmed !== true || typeof st.block_height !== 'number') return { found: true, confirmations: 0 };
      const tip = await request('/blocks/tip/height');
      const height = Number(tip.text.trim());
      return { found: true, confirmations: Math.max(0, height - st.block_height + 1) };
    },
    async isSpent(txid, vout) {
      // Esplora GET /tx/:txid/outspend/:vout: {"spent": false} or {"spent": true, "txid": …, "status": …}.
      const { status, text } = await request(`/tx/${txid}/outspend/${vout}`);
      if (status === 404) return null;
      if (status !== 200) throw new NodeRefusal(`GET /tx/…/outspend at ${origin}: HTTP ${status} ${text.slice(0, 200)}`);
      return (JSON.parse(text) as { spent?: unknown }).spent === true;
    },
  };
}

/** "12.3" sat/vB -> 13n: a fee rate rounded up, never down. */
function ceilDecimal(text: string): bigint | null {
  const m = /^(\d+)(?:\.(\d+))?(?:e[+-]?\d+)?$/i.exec(text);
  if (!m || /e/i.test(text)) return null;
  const whole = BigInt(m[1]!);
  return m[2] && /[1-9]/.test(m[2]) ? whole + 1n : whole;
}

function coreApi(rpcUrl: string, timeoutMs: number): BitcoinSweepApi {
  const url = new URL(rpcUrl);
  const auth = url.username ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}` : null;
  url.username = '';
  url.password = '';
  const endpoint = url.toString();
  const origin = endpointOrigin(rpcUrl);
  let id = 0;

  /** One call; an RPC error object comes back as {error}, so callers decide what a code means. */
  async function call(method: string, params: unknown[], exact: ReadonlySet<string> = new Set()): Promise<{ result?: unknown; error?: { code: number; message: string } }> {
    return withRetries(method, origin, timeoutMs, async () => {
      const res = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
        body: JSON.stringify({ jsonrpc: '1.0', id: ++id, method, params }),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'error',
      });
      const text = await res.text();
      if (res.status === 401 || res.status === 403) throw new NodeRefusal(`${method} at ${origin}: the node refused the credentials (HTTP ${res.status})`);
      let body: { result?: unknown; error?: { code?: unknown; message?: unknown } | null };
      try {
        body = parseExact(text, exact) as typeof body;
      } catch {
        throw new Transient(`HTTP ${res.status}: not JSON`);
      }
      if (body.error && typeof body.error.code === 'number') {
        // -28: still warming up; worth another try.
        if (body.error.code === -28) throw new Transient(String(body.error.message));
        return { error: { code: body.error.code, message: String(body.error.message ?? '') } };
      }
      if (!res.ok) throw new Transient(`HTTP ${res.status}`);
      return { result: body.result };
    });
  }

  async function result(method: string, params: unknown[], exact?: ReadonlySet<string>): Promise<unknown> {
    const answer = await call(method, params, exact);
    if (answer.error) throw new NodeRefusal(`${method} at ${origin}: ${answer.error.message} (${answer.error.code})`);
    return answer.result;
  }

  return {
    async utxos(addresses) {
      // scantxoutset "start" ["addr(…)", …] (Bitcoin Core 0.17+): the confirmed UTXO set only; amount in BTC.
      const scan = (await result('scantxoutset', ['start', addresses.map((a) => `addr(${a})`)], new Set(['amount', 'total_amount']))) as {
        success?: unknown;
        unspents?: { txid: string; vout: number; desc: string; amount: string }[];
      };
      if (scan.success !== true || !Array.isArray(scan.unspents)) throw new ChainError(`scantxoutset at ${origin}: the scan did not complete`);
      const out = new Map<string, Utxo[]>(addresses.map((a) => [a, []]));
      for (const u of scan.unspents) {
        // desc is "addr(<address>)#checksum"; Core writes the address as it was given.
        const address = /^addr\(([^)]+)\)/.exec(u.desc)?.[1];
        const list = address === undefined ? undefined : out.get(address);
        if (!list) continue;
        list.push({ txid: u.txid, vout: u.vout, value: parseUnits(String(u.amount), 8), confirmed: true });
      }
      return out;
    },
    async feeRate(target) {
      // estimatesmartfee: {"feerate": 0.00010000 (BTC/kvB), "blocks": n} or {"errors": […]} without data (regtest).
      const est = (await result('estimatesmartfee', [target], new Set(['feerate']))) as { feerate?: unknown };
      if (typeof est.feerate !== 'string') return null;
      const perKvB = parseUnits(est.feerate, 8);
      return (perKvB + 999n) / 1000n;
    },
    async broadcast(hex) {
      const answer = await call('sendrawtransaction', [hex]);
      if (answer.error) {
        // -27 RPC_VERIFY_ALREADY_IN_CHAIN: "Transaction outputs already in utxo set": it is in a block already.
        if (answer.error.code === -27) return { accepted: true, txid: '' };
        return { accepted: false, error: `${answer.error.message} (${answer.error.code})` };
      }
      return { accepted: true, txid: String(answer.result) };
    },
    async txState(txid) {
      // getrawtransaction <txid> true answers for the mempool, or any block with -txindex; else
      // gettxout on the sweep's single output (unspent until the cold wallet moves it).
      const raw = await call('getrawtransaction', [txid, true]);
      if (!raw.error) {
        const confirmations = (raw.result as { confirmations?: unknown }).confirmations;
        return { found: true, confirmations: typeof confirmations === 'number' ? confirmations : 0 };
      }
      const out = await call('gettxout', [txid, 0, true]);
      if (out.error || out.result === null || out.result === undefined) return { found: false };
      const confirmations = (out.result as { confirmations?: unknown }).confirmations;
      return { found: true, confirmations: typeof confirmations === 'number' ? confirmations : 0 };
    },
    async isSpent(txid, vout) {
      // gettxout with include_mempool: null once spent (or never there); Core cannot tell which.
      const out = await call('gettxout', [txid, vout, true]);
      if (out.error) return null;
      return out.result === null;
    },
  };
}
