import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HDNodeWallet, parseEther, type Contract } from 'ethers';
import { UsageError } from '../domain/errors.ts';
import { isLivePayment } from '../domain/lifecycle.ts';
import { signRequest } from '../sdk/sign-request.ts';
import { verifyWebhook } from '../sdk/verify-webhook.ts';
import { deployCreate2Proxy } from './create2-proxy.ts';
import { deployFixtures } from './evm-fixtures.ts';
import { HARDHAT_MNEMONIC, startHardhatNode, type HardhatNode } from './hardhat-node.ts';

// `chaingate devnet`: a whole local shop in one command. A Hardhat chain in ethereum's testnet slot,
// named for what it is everywhere (network DEVNET, Hardhat's chain id 31337, "Ethereum devnet
// (local)"; a block a second), the test tokens and the payment contract; `serve` (a test
// deployment: checkout.offerTestnets) and `index ethereum --testnet` as the real separate processes
// on a throwaway SQLite database; pools seeded from the public Hardhat phrase; a demo merchant whose
// webhooks go to a receiver here that verifies each signature and prints the event; and a fresh
// invoice whose page offers the devnet's coins. `chaingate devnet pay` plays the buyer. Never a real
// chain, never real funds.

const BIN = fileURLToPath(new URL('../../bin/chaingate', import.meta.url));
const STATE_FILE = resolve('data', 'devnet.json');
/** Hardhat's own chain id: a wallet pointed at it reaches this node, never a public network. */
const CHAIN_ID = 31_337;
const MASTER_KEY = 'de'.repeat(32);

export interface DevnetState {
  baseUrl: string;
  checkoutUrl: string;
  invoiceId: string;
  merchant: { id: string; apiKey: string; apiSecret: string };
  rpcUrl: string;
  chainId: number;
  buyer: { address: string; privateKey: string };
  tokens: { USDT: string; USDC: string };
  paymentContract: string;
  databaseUrl: string;
  dir: string;
  webhookReceiver: string;
  /**
   * Money out (docs/devnet.md#money-out): the wallet secret `sweep sign` reads (Hardhat's public
   * test phrase, in a file readable by its owner only) and the funded fee payer of the same seed.
   * Test only: everyone knows this phrase.
   */
  signer: { seedFile: string; feePayer: string; warning: string };
  /** What points other `chaingate` commands (status, transfers list, …) at this devnet's database. */
  env: { CHAINGATE_DATABASE_URL: string; CHAINGATE_MASTER_KEY: string; CHAINGATE_CONFIG: string };
}

export interface Devnet {
  state: DevnetState;
  stop(): Promise<void>;
}

interface Options {
  databaseUrl?: string;
  /** serve's port (default: any free one). */
  port?: number;
  /** Where event lines go (the receiver's verified webhooks). */
  print: (line: string) => void;
}

function run(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('close', (code) => resolvePromise({ code: code ?? 1, stdout, stderr }));
  });
}

async function runOk(args: string[], env: Record<string, string>): Promise<string> {
  const res = await run(args, env);
  if (res.code !== 0) throw new UsageError(`chaingate ${args.join(' ')} failed: ${res.stderr.trim()}`);
  return res.stdout;
}

/** A long-running child with its output in a log file; resolves once `ready` matches its stdout. */
function startChild(args: string[], env: Record<string, string>, logFile: string, ready: RegExp): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const log = createWriteStream(logFile);
    let out = '';
    const timer = setTimeout(() => reject(new Error(`chaingate ${args[0]} did not start; see ${logFile}`)), 60_000);
    const onData = (b: Buffer) => {
      log.write(b);
      if (out.length < 100_000) out += b.toString();
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        resolvePromise({ child, match: m });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`chaingate ${args[0]} exited with ${code}; see ${logFile}`));
    });
  });
}

/** A refusal from the devnet's gateway, with its HTTP status and error code. */
export class DevnetApiError extends UsageError {
  readonly status: number;
  readonly code: string;
  constructor(message: string, status: number, code: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function signed(state: Pick<DevnetState, 'baseUrl' | 'merchant'>, method: string, path: string, payload?: unknown) {
  const body = payload === undefined ? undefined : JSON.stringify(payload);
  const headers = signRequest({ apiKey: state.merchant.apiKey, apiSecret: state.merchant.apiSecret, method, path, body });
  if (body === undefined) delete headers['Content-Type'];
  let res: Response;
  try {
    res = await fetch(state.baseUrl + path, { method, headers, body });
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    throw new UsageError(`${method} ${path}: cannot reach the devnet at ${state.baseUrl} (${err instanceof Error ? err.message : String(err)}${cause}); is \`chaingate devnet\` running?`);
  }
  let json: { success: boolean; data: Record<string, unknown> & { id: string }; error?: { code: string; message: string } };
  try {
    json = (await res.json()) as typeof json;
  } catch {
    throw new DevnetApiError(`${method} ${path}: HTTP ${res.status} without a JSON answer`, res.status, 'UNREADABLE');
  }
  if (!json.success) throw new DevnetApiError(`${method} ${path}: ${json.error?.code} ${json.error?.message}`, res.status, json.error?.code ?? 'UNKNOWN');
  return json.data;
}

/** The merchant side of the devnet: verifies every webhook and prints it; serves the return page. */
function startReceiver(secret: () => string, print: (line: string) => void): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Devnet shop</title><h1>Thank you! Back at the devnet shop.</h1>');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const check = verifyWebhook({ apiSecret: secret(), rawBody, signature: req.headers['x-webhook-signature'], timestamp: req.headers['x-webhook-timestamp'] });
      let type = '?';
      let detail = '';
      try {
        const event = JSON.parse(rawBody.toString()) as { type: string; data?: { payment?: { id: string; status: string; receivedAmount: string; cryptoCurrency: string } } };
        type = event.type;
        const p = event.data?.payment;
        if (p) detail = ` payment ${p.id} ${p.status} ${p.receivedAmount} ${p.cryptoCurrency}`;
      } catch {
        /* printed as unreadable below */
      }
      print(`webhook ${type}${detail} — signature ${check.ok ? 'verified' : `REJECTED (${check.reason})`}`);
      res.writeHead(check.ok ? 200 : 401).end();
    });
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

export async function startDevnet(options: Options): Promise<Devnet> {
  const dir = mkdtempSync(join(tmpdir(), 'chaingate-devnet-'));
  const databaseUrl = options.databaseUrl ?? `sqlite:${join(dir, 'devnet.db')}`;
  // Run last (the list runs backwards): the throwaway folder (database, logs, config, the seed file)
  // and the state file that points at it leave with the devnet, on Ctrl-C too.
  const stops: (() => Promise<void> | void)[] = [
    () => rmSync(dir, { recursive: true, force: true }),
    () => {
      if (readStateDir() === dir) rmSync(STATE_FILE, { force: true });
    },
  ];
  let stopped: Promise<void> | null = null;
  const stop = () =>
    (stopped ??= (async () => {
      for (const s of stops.reverse()) await Promise.resolve(s()).catch(() => undefined);
    })());
  try {
    const node: HardhatNode = await startHardhatNode({ chainId: CHAIN_ID });
    stops.push(() => node.stop());
    const fx = await deployFixtures(node);
    // Money out: the CREATE2 proxy every public chain has (the EIP-7702 Sweeper is placed through
    // it), and a fee payer of the pool's seed with ETH for the gas.
    await deployCreate2Proxy(node, fx.deployer);
    const account = HDNodeWallet.fromPhrase(HARDHAT_MNEMONIC, undefined, "m/44'/60'/0'");
    const feePayer = account.deriveChild(1).deriveChild(0).address;
    await (await fx.deployer.sendTransaction({ to: feePayer, value: parseEther('100') })).wait();
    const seedFile = join(dir, 'signer-seed.txt');
    writeFileSync(seedFile, `${HARDHAT_MNEMONIC}\n`, { mode: 0o600 });
    // A block every second, with or without transactions, so confirmations keep coming.
    await node.send('evm_setIntervalMining', [1000]);

    let apiSecret = '';
    const receiver = await startReceiver(() => apiSecret, options.print);
    stops.push(() => new Promise<void>((r) => receiver.close(() => r())));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

    const config = {
      chains: Object.fromEntries(
        ['polygon', 'bsc', 'arbitrum', 'optimism', 'base', 'avalanche', 'bitcoin', 'tron', 'solana', 'ton'].map((c) => [c, { enabled: false }]),
      ),
      // A test deployment: buyers are offered the devnet chain (and the gateway's `testnet` defaults
      // to true), so the page and every example of docs/api.md work here as written.
      checkout: { offerTestnets: true },
      webhooks: { allowPrivateNetworks: true, retryScheduleSeconds: [1, 5, 30] },
      rateLimit: { enabled: false },
      indexer: { minPollMs: 500 },
    } as Record<string, unknown>;
    (config.chains as Record<string, unknown>).ethereum = {
      testnet: {
        network: 'DEVNET',
        chainId: CHAIN_ID,
        rpcUrl: node.url,
        label: 'Ethereum devnet (local)',
        blockTimeMs: 1000,
        confirmations: 2,
        startMargin: 0,
        tokens: { USDT: { address: fx.addresses.usdt, decimals: 6 }, USDC: { address: fx.addresses.usdc, decimals: 6 } },
        paymentContract: fx.addresses.gateway,
        treasury: fx.addresses.treasury,
      },
    };
    const configFile = join(dir, 'chaingate.json');
    writeFileSync(configFile, JSON.stringify(config, null, 2));
    const env = { CHAINGATE_DATABASE_URL: databaseUrl, CHAINGATE_MASTER_KEY: MASTER_KEY, CHAINGATE_CONFIG: configFile, CHAINGATE_PORT: String(options.port ?? 0), CHAINGATE_METRICS_PORT: '0', CHAINGATE_LOG_LEVEL: 'info' };

    if (!databaseUrl.startsWith('sqlite:')) await runOk(['migrate'], env);
    // Deposits from the public Hardhat phrase, far past the funded accounts (never send real funds there).
    const xpub = account.neuter().extendedKey;
    await runOk(['wallets', 'seed', '--chain', 'ethereum', '--testnet', '--xpub', xpub, '--start', '1000', '--count', '50'], env);
    const merchant = JSON.parse(await runOk(['merchant', 'create', '--name', 'Devnet Shop', '--webhook-url', `${receiverUrl}/hooks`, '--json'], env)) as { id: string; apiKey: string; apiSecret: string };
    apiSecret = merchant.apiSecret;

    const serve = await startChild(['serve'], env, join(dir, 'serve.log'), /"listening":"([^"]+)"/);
    stops.push(() => stopChild(serve.child));
    const indexer = await startChild(['index', 'ethereum', '--testnet'], env, join(dir, 'indexer.log'), /indexer started/);
    stops.push(() => stopChild(indexer.child));
    const baseUrl = serve.match[1]!;

    const state: DevnetState = {
      baseUrl,
      checkoutUrl: '',
      invoiceId: '',
      merchant,
      rpcUrl: node.url,
      chainId: CHAIN_ID,
      buyer: { address: fx.payer.address, privateKey: fx.payer.privateKey },
      tokens: { USDT: fx.addresses.usdt, USDC: fx.addresses.usdc },
      paymentContract: fx.addresses.gateway,
      databaseUrl,
      dir,
      webhookReceiver: `${receiverUrl}/hooks`,
      signer: {
        seedFile,
        feePayer,
        warning: "TEST ONLY: Hardhat's public test phrase, known to everyone; never use it, or these addresses, with real funds",
      },
      env: { CHAINGATE_DATABASE_URL: databaseUrl, CHAINGATE_MASTER_KEY: MASTER_KEY, CHAINGATE_CONFIG: configFile },
    };
    const opened = await openInvoice(state, `${receiverUrl}/return`);
    Object.assign(state, opened);
    mkdirSync(resolve('data'), { recursive: true });
    writeFileSync(STATE_FILE, JSON.stringify(state, null, 2));
    return { state, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      r();
    });
    child.kill('SIGTERM');
  });
}

/** A fresh invoice, not checked out: its page lets the buyer pick the coin, as a shop's would. */
export async function openInvoice(state: Pick<DevnetState, 'baseUrl' | 'merchant'>, returnUrl: string) {
  const invoice = await signed(state, 'POST', '/api/v1/invoices', { orderId: `devnet-${randomBytes(4).toString('hex')}`, amount: '2500', currency: 'USD', description: 'Devnet test order', returnUrl });
  return { invoiceId: invoice.id, checkoutUrl: `${state.baseUrl}/i/${invoice.id}` };
}

/** The folder the state file names, or null (no devnet state, or another one's). */
function readStateDir(): string | null {
  try {
    return (JSON.parse(readFileSync(STATE_FILE, 'utf8')) as DevnetState).dir;
  } catch {
    return null;
  }
}

export function readState(file = STATE_FILE): DevnetState {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as DevnetState;
  } catch {
    throw new UsageError(`no devnet state at ${file}: start \`chaingate devnet\` first (in another terminal)`);
  }
}

/**
 * Plays the buyer: finds the payment (a payment id, or an invoice id whose live payment it takes,
 * or on a PAID invoice the payment that completed it, checking the invoice out in `token` (default
 * USDT) if it has neither) and sends its amount, or
 * `amount`, from the funded account. Only a 404 for the payment id makes it try the id as an
 * invoice: any other failure (the devnet down, a server error) is reported as it is. A `token` that
 * differs from the coin of an existing payment is refused, never silently ignored.
 */
export async function pay(state: DevnetState, id: string, options: { amount?: string; token?: string } = {}) {
  const payment = await findPayment(state, id, options.token);
  const coin = String(payment.cryptoCurrency);
  if (options.token && options.token !== coin) {
    throw new UsageError(`--token ${options.token} conflicts with payment ${String(payment.id)}, which is already checked out in ${coin}: leave --token out, or open a new invoice to pay in ${options.token}`);
  }
  const { Contract, JsonRpcProvider, Wallet, parseUnits } = await import('ethers');
  const provider = new JsonRpcProvider(state.rpcUrl, state.chainId, { staticNetwork: true });
  const wallet = new Wallet(state.buyer.privateKey, provider);
  const amount = options.amount ?? String(payment.amount);
  const to = String(payment.address);
  let hash: string;
  try {
    if (coin === 'ETH') {
      hash = (await wallet.sendTransaction({ to, value: parseUnits(amount, 18) })).hash;
    } else {
      const token = new Contract(state.tokens[coin as 'USDT' | 'USDC'], ['function transfer(address,uint256)'], wallet) as Contract;
      hash = (await token.getFunction('transfer')(to, parseUnits(amount, 6))).hash as string;
    }
  } finally {
    provider.destroy();
  }
  return { paymentId: String(payment.id), to, amount, coin, txHash: hash };
}

const isNotFound = (err: unknown): boolean => err instanceof DevnetApiError && err.status === 404;

/** The payment of `id`: itself, or the live payment of the invoice `id` (opened in `token` if none). */
async function findPayment(state: DevnetState, id: string, token: string | undefined): Promise<Record<string, unknown>> {
  try {
    return await signed(state, 'GET', `/api/v1/payments/${id}`);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  let invoice: Record<string, unknown>;
  try {
    invoice = await signed(state, 'GET', `/api/v1/invoices/${id}`);
  } catch (err) {
    if (isNotFound(err)) throw new UsageError(`${id} is neither a payment nor an invoice of the devnet merchant`);
    throw err;
  }
  // The live payment; on a PAID invoice, the payment that completed it (more funds to it show what
  // arrives after completion); otherwise a new checkout.
  const payments = invoice.payments as { id: string; status: string }[];
  const taken = payments.find((p) => isLivePayment(p.status)) ?? (invoice.status === 'PAID' ? payments.find((p) => p.status === 'COMPLETED') : undefined);
  const paymentId = taken?.id ?? (await openCheckout(state, id, token ?? 'USDT'));
  return signed(state, 'GET', `/api/v1/payments/${paymentId}`);
}

async function openCheckout(state: DevnetState, invoiceId: string, token: string): Promise<string> {
  const { payment } = (await signed(state, 'POST', `/api/v1/invoices/${invoiceId}/checkout`, { blockchain: 'ethereum', cryptoCurrency: token, testnet: true })) as unknown as { payment: { id: string } };
  return payment.id;
}
