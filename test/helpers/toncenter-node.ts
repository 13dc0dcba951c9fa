import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Blockchain, internal, type BlockchainTransaction, type SandboxContract, type TreasuryContract } from '@ton/sandbox';
import { Address, beginCell, Cell, contractAddress, loadMessage, storeMessage, toNano, type Message, type TupleItem } from '@ton/core';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/load-config.ts';
import { resolveChains } from '../../src/families/families.ts';
import type { SignedSweepTx, SweepKey, SweepPlan } from '../../src/families/sweep.ts';
import { tonSweepSender } from '../../src/families/ton/sweep-send.ts';
import { tonSweepSigner } from '../../src/families/ton/sweep-sign.ts';
import { listenLocal } from './local-server.ts';
import { JETTON_MINTER_CODE_BOC, JETTON_WALLET_CODE_BOC } from './ton-jetton-code.ts';

// A TON chain for the TON reader's tests: every transaction is executed by @ton/sandbox's TVM
// (the real emulator) with standard TEP-74 jetton code, and served through an HTTP server that
// answers as toncenter API v3 does (TON Index; ton-org/docs ecosystem/rpc/toncenter/v3.yaml):
// /api/v3/masterchainInfo, /api/v3/blocks, /api/v3/transactions (account list, start_utime,
// limit/offset, sort) with `address_book`, and POST /api/v3/runGetMethod running the get-method in
// the same TVM. Each step the test takes is committed by one new masterchain block; `mine(n)` adds
// empty ones. Addresses are raw ("0:ABCD…", upper case), hashes base64, amounts decimal strings,
// opcodes "0x…" as toncenter renders them. For the sweep's server steps it also answers
// /api/v3/addressInformation (use_v2=false), /api/v3/jetton/wallets (by address, balances from the
// wallets' own get_wallet_data), POST /api/v3/message (an external message, executed at once; one
// the wallet does not accept is refused with HTTP 500 and the emulator's error, as toncenter
// relays the liteserver's) and /api/v3/transactionsByMessage (by the message cell's real hash or,
// for an external message, its TEP-467 normalised hash).

export const OP_TRANSFER = 0x0f8a7ea5;
const OP_MINT = 21;
const OP_INTERNAL_TRANSFER = 0x178d4519;
const OP_TRANSFER_NOTIFICATION = 0x7362d09c;

interface McBlock {
  seqno: number;
  rootHash: string;
  genUtime: number;
  transactions: { tx: BlockchainTransaction; v3: Record<string, unknown> }[];
}

export interface Jetton {
  master: Address;
  walletOf(owner: Address): Promise<Address>;
}

/** Rewrites an answer before it is sent (a fault, a malformed field); returning `answer` leaves it be. */
export type Tamper = (path: string, query: URLSearchParams, answer: unknown) => unknown;

export interface TonNodeOptions {
  /** The masterchain's global_id: -239 mainnet (default), -3 testnet. */
  globalId?: number;
}

export interface TonNode {
  url: string;
  blockchain: Blockchain;
  buyer: SandboxContract<TreasuryContract>;
  attacker: SandboxContract<TreasuryContract>;
  usdt: Jetton;
  /** Same code and content, another admin: another master. */
  lookAlike: Jetton;
  seqno(): number;
  mine(count?: number): void;
  /** TON from the buyer's wallet; bounceable or not, with a body (a comment, a binary payload) or none. Returns the transactions it caused. */
  sendTon(to: Address, nano: bigint, bounce: boolean, body?: Cell): Promise<BlockchainTransaction[]>;
  /**
   * A jetton transfer from the buyer's jetton wallet to `to` (the owner), with or without forward
   * TON; the excess TON goes to `responseTo` (default the buyer).
   */
  sendJetton(jetton: Jetton, to: Address, amount: bigint, forwardTon: bigint, responseTo?: Address): Promise<BlockchainTransaction[]>;
  /** Every transaction the chain executed so far, oldest first. */
  history(): BlockchainTransaction[];
  /** Any message, executed and committed by a new masterchain block. */
  send(message: Message): Promise<BlockchainTransaction[]>;
  /** Rewrites answers from now on (null: stop). */
  tamper(fn: Tamper | null): void;
  /** A transfer_notification written by hand and sent by a plain wallet. */
  forgeNotification(to: Address, amount: bigint): Promise<BlockchainTransaction[]>;
  apiKeys: string[];
  calls: Record<string, number>;
  close(): Promise<void>;
}

const rawOf = (a: Address) => a.toRawString().toUpperCase();

function opcodeOf(body: Cell): string | null {
  const s = body.beginParse();
  if (s.remainingBits < 32) return null;
  return `0x${s.loadUint(32).toString(16).padStart(8, '0')}`;
}

function messageV3(m: Message): Record<string, unknown> {
  const body = m.body;
  const content = { hash: body.hash().toString('base64'), body: body.toBoc().toString('base64'), decoded: null };
  const hash = beginCell().storeRef(body).endCell().hash().toString('base64');
  if (m.info.type === 'internal') {
    return {
      hash,
      source: rawOf(m.info.src),
      destination: rawOf(m.info.dest),
      value: m.info.value.coins.toString(),
      value_extra_currencies: {},
      fwd_fee: m.info.forwardFee.toString(),
      ihr_fee: m.info.ihrFee.toString(),
      created_lt: m.info.createdLt.toString(),
      created_at: String(m.info.createdAt),
      opcode: opcodeOf(body),
      ihr_disabled: m.info.ihrDisabled,
      bounce: m.info.bounce,
      bounced: m.info.bounced,
      import_fee: null,
      message_content: content,
      init_state: null,
    };
  }
  return { hash, source: null, destination: m.info.type === 'external-in' ? rawOf(m.info.dest) : null, value: null, opcode: opcodeOf(body), message_content: content };
}


/** A message's real hash (its cell's), hex: what toncenter's msg_hash and message_hash carry. */
export const messageHash = (m: Message): Buffer => beginCell().store(storeMessage(m)).endCell().hash();

/**
 * An external-in message's normalised hash, written here from TEP-467 apart from the code under
 * test (src addr_none, import_fee 0, no init, the body as a reference): toncenter's
 * message_hash_norm, which /api/v3/transactionsByMessage also finds a transaction by.
 */
export function normalizedMessageHash(m: Message): Buffer | null {
  if (m.info.type !== 'external-in') return null;
  return beginCell()
    .store(storeMessage({ info: { type: 'external-in', src: null, dest: m.info.dest, importFee: 0n }, init: null, body: m.body }, { forceRef: true }))
    .endCell()
    .hash();
}

const STATUS: Record<string, string> = { uninit: 'uninit', active: 'active', frozen: 'frozen', 'non-existing': 'nonexist' };

function transactionV3(tx: BlockchainTransaction, seqno: number): Record<string, unknown> {
  const d = tx.description;
  if (d.type !== 'generic') throw new Error(`unexpected ${d.type} transaction`);
  const compute =
    d.computePhase.type === 'skipped'
      ? { skipped: true, reason: d.computePhase.reason === 'no-state' ? 'no_state' : d.computePhase.reason === 'bad-state' ? 'bad_state' : 'no_gas' }
      : {
          skipped: false,
          success: d.computePhase.success,
          msg_state_used: d.computePhase.messageStateUsed,
          account_activated: d.computePhase.accountActivated,
          gas_fees: d.computePhase.gasFees.toString(),
          gas_used: d.computePhase.gasUsed.toString(),
          gas_limit: d.computePhase.gasLimit.toString(),
          mode: d.computePhase.mode,
          exit_code: d.computePhase.exitCode,
          vm_steps: d.computePhase.vmSteps,
        };
  const action = d.actionPhase
    ? {
        success: d.actionPhase.success,
        valid: d.actionPhase.valid,
        no_funds: d.actionPhase.noFunds,
        status_change: d.actionPhase.statusChange,
        result_code: d.actionPhase.resultCode,
        tot_actions: d.actionPhase.totalActions,
        spec_actions: d.actionPhase.specActions,
        skipped_actions: d.actionPhase.skippedActions,
        msgs_created: d.actionPhase.messagesCreated,
      }
    : undefined;
  const bounce = d.bouncePhase ? { type: d.bouncePhase.type === 'ok' ? 'ok' : d.bouncePhase.type === 'no-funds' ? 'nofunds' : 'negfunds' } : undefined;
  return {
    account: `0:${tx.address.toString(16).padStart(64, '0').toUpperCase()}`,
    hash: tx.hash().toString('base64'),
    lt: tx.lt.toString(),
    now: tx.now,
    mc_block_seqno: seqno,
    trace_id: tx.hash().toString('base64'),
    prev_trans_hash: Buffer.from(tx.prevTransactionHash.toString(16).padStart(64, '0'), 'hex').toString('base64'),
    prev_trans_lt: tx.prevTransactionLt.toString(),
    orig_status: STATUS[tx.oldStatus] ?? tx.oldStatus,
    end_status: STATUS[tx.endStatus] ?? tx.endStatus,
    total_fees: tx.totalFees.coins.toString(),
    total_fees_extra_currencies: {},
    description: {
      type: 'ord',
      aborted: d.aborted,
      destroyed: d.destroyed,
      credit_first: d.creditFirst,
      ...(d.creditPhase ? { credit_ph: { credit: d.creditPhase.credit.coins.toString() } } : {}),
      compute_ph: compute,
      ...(action ? { action } : {}),
      ...(bounce ? { bounce } : {}),
    },
    block_ref: { workchain: 0, shard: '8000000000000000', seqno },
    in_msg: tx.inMessage ? messageV3(tx.inMessage) : null,
    out_msgs: tx.outMessages.values().map(messageV3),
    emulated: false,
  };
}

export async function startTonNode(options: TonNodeOptions = {}): Promise<TonNode> {
  const globalId = options.globalId ?? -239;
  let tamper: Tamper | null = null;
  const blockchain = await Blockchain.create();
  const base = Math.floor(Date.now() / 1000) - 3600;
  const blocks: McBlock[] = [];
  const apiKeys: string[] = [];
  const calls: Record<string, number> = {};
  const newBlock = () => {
    const seqno = blocks.length + 1000;
    blockchain.now = base + blocks.length * 2;
    blocks.push({ seqno, rootHash: randomBytes(32).toString('base64'), genUtime: blockchain.now, transactions: [] });
  };
  newBlock();
  const commit = (txs: BlockchainTransaction[]) => {
    newBlock();
    const b = blocks.at(-1)!;
    for (const tx of txs) b.transactions.push({ tx, v3: transactionV3(tx, b.seqno) });
    return txs;
  };
  const send = async (m: Message) => commit((await blockchain.sendMessage(m)).transactions);

  const admin = await blockchain.treasury('admin');
  const otherAdmin = await blockchain.treasury('look-alike admin');
  const buyer = await blockchain.treasury('buyer');
  const attacker = await blockchain.treasury('attacker');
  const walletCode = Cell.fromBase64(JETTON_WALLET_CODE_BOC);
  const content = beginCell().storeUint(1, 8).storeStringTail('https://tether.to/usdt-ton.json').endCell(); // same metadata for both masters

  async function deployJetton(owner: SandboxContract<TreasuryContract>): Promise<Jetton> {
    const init = { code: Cell.fromBase64(JETTON_MINTER_CODE_BOC), data: beginCell().storeCoins(0).storeAddress(owner.address).storeRef(content).storeRef(walletCode).endCell() };
    const master = contractAddress(0, init);
    await send(internal({ from: owner.address, to: master, value: toNano('1'), stateInit: init, body: beginCell().endCell() }));
    const jetton: Jetton = {
      master,
      async walletOf(holder) {
        const res = await blockchain.runGetMethod(master, 'get_wallet_address', [{ type: 'slice', cell: beginCell().storeAddress(holder).endCell() }]);
        return res.stackReader.readAddress();
      },
    };
    // Mint a float to the buyer: op 21 with the internal_transfer the minter forwards.
    const transfer = beginCell().storeUint(OP_INTERNAL_TRANSFER, 32).storeUint(0, 64).storeCoins(1_000_000_000_000n).storeAddress(master).storeAddress(owner.address).storeCoins(0).storeBit(0).endCell();
    const mint = beginCell().storeUint(OP_MINT, 32).storeUint(0, 64).storeAddress(buyer.address).storeCoins(toNano('0.05')).storeRef(transfer).endCell();
    await send(internal({ from: owner.address, to: master, value: toNano('0.2'), body: mint }));
    return jetton;
  }
  const usdt = await deployJetton(admin);
  const lookAlike = await deployJetton(otherAdmin);

  const blockV3 = (b: McBlock) => ({
    workchain: -1,
    shard: '8000000000000000',
    seqno: b.seqno,
    root_hash: b.rootHash,
    file_hash: b.rootHash,
    global_id: globalId,
    version: 0,
    after_merge: false,
    before_split: false,
    after_split: false,
    want_merge: false,
    want_split: false,
    key_block: false,
    vert_seqno_incr: false,
    flags: 1,
    gen_utime: String(b.genUtime),
    start_lt: String(b.seqno * 1_000_000),
    end_lt: String(b.seqno * 1_000_000 + 1000),
    tx_count: b.transactions.length,
    masterchain_block_ref: { workchain: -1, shard: '8000000000000000', seqno: b.seqno },
    prev_blocks: b.seqno > 1000 ? [{ workchain: -1, shard: '8000000000000000', seqno: b.seqno - 1 }] : [],
  });

  async function answer(path: string, query: URLSearchParams, body: Record<string, unknown>): Promise<unknown> {
    switch (path) {
      case '/api/v3/masterchainInfo':
        return { first: blockV3(blocks[0]!), last: blockV3(blocks.at(-1)!) };
      case '/api/v3/blocks': {
        const seqno = query.get('seqno');
        let list = blocks;
        if (seqno !== null) list = blocks.filter((b) => b.seqno === Number(seqno));
        const since = query.get('start_utime');
        if (since !== null) list = list.filter((b) => b.genUtime >= Number(since));
        const offset = Number(query.get('offset') ?? 0);
        const limit = Math.min(1000, Number(query.get('limit') ?? 10));
        return { blocks: list.slice(offset, offset + limit).map(blockV3) };
      }
      case '/api/v3/transactionsByMasterchainBlock': {
        const b = blocks.find((x) => x.seqno === Number(query.get('seqno')));
        const offset = Number(query.get('offset') ?? 0);
        const limit = Math.min(1000, Number(query.get('limit') ?? 10));
        const list = [...(b?.transactions ?? [])].sort((x, y) => (x.tx.lt < y.tx.lt ? -1 : 1));
        if (query.get('sort') !== 'asc') list.reverse();
        return { transactions: list.slice(offset, offset + limit).map((t) => t.v3), address_book: {} };
      }
      case '/api/v3/transactions': {
        const accounts = new Set(query.getAll('account').map((a) => rawOf(Address.parse(a))));
        const since = Number(query.get('start_utime') ?? 0);
        let list = blocks.flatMap((b) => b.transactions).filter(({ tx, v3 }) => accounts.has(String(v3.account)) && tx.now >= since);
        list.sort((a, b) => (a.tx.lt < b.tx.lt ? -1 : 1));
        if (query.get('sort') !== 'asc') list = list.reverse();
        const offset = Number(query.get('offset') ?? 0);
        const limit = Math.min(1000, Number(query.get('limit') ?? 10));
        const page = list.slice(offset, offset + limit).map((t) => t.v3);
        const book: Record<string, unknown> = {};
        for (const t of page) book[String(t.account)] = { user_friendly: Address.parseRaw(String(t.account)).toString({ bounceable: false }), domain: null };
        return { transactions: page, address_book: book };
      }
      case '/api/v3/runGetMethod': {
        const stack: TupleItem[] = ((body.stack ?? []) as { type: string; value: string }[]).map((i) =>
          i.type === 'num' ? { type: 'int', value: BigInt(i.value) } : { type: i.type === 'cell' ? 'cell' : 'slice', cell: Cell.fromBase64(i.value) },
        );
        const res = await blockchain.runGetMethod(Address.parse(String(body.address)), String(body.method), stack);
        return {
          gas_used: Number(res.gasUsed),
          exit_code: res.exitCode,
          stack: res.stack.map((i) =>
            i.type === 'int' ? { type: 'num', value: `0x${i.value.toString(16)}` } : 'cell' in i ? { type: i.type, value: i.cell.toBoc().toString('base64') } : { type: i.type, value: null },
          ),
        };
      }
      case '/api/v3/addressInformation': {
        const contract = await blockchain.getContract(Address.parse(String(query.get('address'))));
        const state = contract.accountState;
        const status = state === undefined ? 'nonexist' : state.type;
        const code = state?.type === 'active' && state.state.code ? state.state.code.toBoc().toString('base64') : null;
        return { balance: contract.balance.toString(), status, code, data: null, last_transaction_lt: '0', last_transaction_hash: null, frozen_hash: null };
      }
      case '/api/v3/jetton/wallets': {
        const out: Record<string, unknown>[] = [];
        for (const a of query.getAll('address')) {
          const address = Address.parse(a);
          const contract = await blockchain.getContract(address);
          if (contract.accountState?.type !== 'active') continue;
          const res = await blockchain.runGetMethod(address, 'get_wallet_data', []);
          const r = res.stackReader;
          const balance = r.readBigNumber();
          const owner = r.readAddress();
          const jetton = r.readAddress();
          out.push({ address: rawOf(address), balance: balance.toString(), owner: rawOf(owner), jetton: rawOf(jetton), last_transaction_lt: '0', code_hash: '', data_hash: '' });
        }
        return { jetton_wallets: out, address_book: {}, metadata: {} };
      }
      case '/api/v3/message': {
        const cell = Cell.fromBase64(String(body.boc));
        const m = loadMessage(cell.beginParse());
        await send(m);
        return { message_hash: cell.hash().toString('base64'), message_hash_norm: normalizedMessageHash(m)!.toString('base64') };
      }
      case '/api/v3/transactionsByMessage': {
        const wanted = String(query.get('msg_hash'));
        const hash = /^[0-9a-fA-F]{64}$/.test(wanted) ? Buffer.from(wanted, 'hex') : Buffer.from(wanted, 'base64');
        // By the message's real hash or, for an external message, its normalised one (as toncenter does).
        const found = blocks.flatMap((b) => b.transactions).filter(({ tx }) => tx.inMessage && (messageHash(tx.inMessage).equals(hash) || normalizedMessageHash(tx.inMessage)?.equals(hash)));
        const real = (m: Message, v3: Record<string, unknown>) => ({ ...v3, hash: messageHash(m).toString('base64') });
        return {
          transactions: found.map(({ tx, v3 }) => ({
            ...v3,
            in_msg: tx.inMessage ? real(tx.inMessage, v3.in_msg as Record<string, unknown>) : null,
            out_msgs: tx.outMessages.values().map((m, i) => real(m, (v3.out_msgs as Record<string, unknown>[])[i]!)),
          })),
          address_book: {},
        };
      }
      default:
        return null;
    }
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      calls[url.pathname] = (calls[url.pathname] ?? 0) + 1;
      const key = req.headers['x-api-key'];
      if (typeof key === 'string') apiKeys.push(key);
      let body: Record<string, unknown> = {};
      try {
        body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>) : {};
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid json' }));
        return;
      }
      answer(url.pathname, url.searchParams, body).then(
        (answered) => {
          const out = tamper && answered !== null ? tamper(url.pathname, url.searchParams, answered) : answered;
          if (out === null) res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not found' }));
          else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
        },
        (err: unknown) => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(err) })),
      );
    });
  });
  const local = await listenLocal(server);

  return {
    url: local.url,
    blockchain,
    buyer,
    attacker,
    usdt,
    lookAlike,
    seqno: () => blocks.at(-1)!.seqno,
    mine(count = 1) {
      for (let i = 0; i < count; i++) newBlock();
    },
    sendTon: (to, nano, bounce, body) => send(internal({ from: buyer.address, to, value: nano, bounce, ...(body ? { body } : {}) })),
    async sendJetton(jetton, to, amount, forwardTon, responseTo = buyer.address) {
      const wallet = await jetton.walletOf(buyer.address);
      const body = beginCell()
        .storeUint(OP_TRANSFER, 32)
        .storeUint(0, 64)
        .storeCoins(amount)
        .storeAddress(to)
        .storeAddress(responseTo)
        .storeBit(0) // no custom payload
        .storeCoins(forwardTon)
        .storeBit(0) // empty forward payload, inline
        .endCell();
      return send(internal({ from: buyer.address, to: wallet, value: toNano('0.1') + forwardTon, body }));
    },
    forgeNotification(to, amount) {
      const body = beginCell().storeUint(OP_TRANSFER_NOTIFICATION, 32).storeUint(0, 64).storeCoins(amount).storeAddress(attacker.address).storeBit(0).endCell();
      return send(internal({ from: attacker.address, to, value: toNano('0.05'), bounce: false, body }));
    },
    send,
    history: () => blocks.flatMap((b) => b.transactions.map((t) => t.tx)),
    tamper(fn) {
      tamper = fn;
    },
    apiKeys,
    calls,
    close: local.close,
  };
}

// The family's three steps against a node, as the sweep and refund tests drive them.

/** A configuration whose ton mainnet is the node, with its USDT master in the registry. */
export function tonWorld(ton: TonNode) {
  const master = ton.usdt.master.toString({ bounceable: true });
  const { config } = loadConfig({ env: {}, overrides: { chains: { ton: { mainnet: { rpcUrl: ton.url, tokens: { USDT: { address: master, decimals: 6 } } } } }, indexer: { rpcTimeoutMs: 2000 } } });
  return { config, network: resolveChains(config.chains).chains.ton.mainnet };
}

/** A plan file's content around the planner's parts; `extra` makes it a refund (kind, refund). */
export function tonPlanOf(parts: Pick<SweepPlan, 'deposits' | 'skipped' | 'transactions'>, to: string, feePayer: string | null, extra: Partial<SweepPlan> = {}): SweepPlan {
  return { format: 'chaingate-sweep-plan/1', id: 'test', kind: 'sweep', chain: 'ton', family: 'ton', network: 'MAINNET', testnet: false, to, feePayer, createdAt: new Date().toISOString(), ...parts, ...extra };
}

/** What `sweep sign` does with the seed: every deposit's key and the fee payer's, searched among the first `limit` keys (list pool). */
export function tonKeysFor(seed: Uint8Array, plan: SweepPlan, limit = 20): Map<string, SweepKey> {
  const keys = new Map<string, SweepKey>();
  for (const d of plan.deposits) keys.set(d.address, tonSweepSigner.deriveKey(seed, d, plan, limit));
  if (plan.feePayer) keys.set(plan.feePayer, tonSweepSigner.deriveKey(seed, { address: plan.feePayer, derivationIndex: null, source: 'fee-payer' }, plan, limit));
  return keys;
}

/** An owner's balance of a jetton, read from its jetton wallet (0 when that wallet is not deployed). */
export async function jettonBalanceOf(ton: TonNode, jetton: Jetton, owner: Address): Promise<bigint> {
  const wallet = await jetton.walletOf(owner);
  const contract = await ton.blockchain.getContract(wallet);
  if (contract.accountState?.type !== 'active') return 0n;
  return (await ton.blockchain.runGetMethod(wallet, 'get_wallet_data', [])).stackReader.readBigNumber();
}

export const tonBalanceOf = async (ton: TonNode, a: Address) => (await ton.blockchain.getContract(a)).balance;

/** Broadcasts in the plan's order, each after the ones it waits for are final, as `sweep broadcast --wait` does. */
export async function tonBroadcastAll(w: ReturnType<typeof tonWorld>, plan: SweepPlan, signed: SignedSweepTx[]) {
  const states = new Map<string, { state: string; fee?: string; error?: string }>();
  for (const tx of signed) {
    const planned = plan.transactions.find((t) => t.id === tx.id)!;
    for (const before of planned.after) assert.equal(states.get(before)?.state, 'final', `${tx.id} waits for ${before}`);
    assert.deepEqual(await tonSweepSender.broadcast(w.network, w.config, tx), { accepted: true }, tx.id);
    states.set(tx.id, await tonSweepSender.status(w.network, w.config, tx.txid));
  }
  return states;
}
