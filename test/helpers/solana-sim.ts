import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { encodeBase58 } from '../../src/families/base58check.ts';
import { listenLocal } from './local-server.ts';

// A Solana cluster behind its JSON-RPC API, answering in Agave's shapes (rpc/src/rpc.rs,
// transaction-status/src/lib.rs, rpc-client-api/src/custom_error.rs, Agave 2.x): getGenesisHash,
// getSlot (confirmed / finalized), getBlock with transactionDetails "accounts" (accountKeys as
// {pubkey, writable, signer, source: "transaction" | "lookupTable"}, meta without loadedAddresses)
// or "none", getSignaturesForAddress and getTransaction (encoding json: message.accountKeys then
// meta.loadedAddresses). getBlock errors come at the heights Agave gives them (rpc/src/rpc.rs
// get_block and check_blockstore_root): -32004 BlockNotAvailable for any slot at or above the root
// (the finalized slot) that the node cannot serve — a slot announced but not confirmed yet, and a
// skipped slot too, since only a rooted slot can be known as skipped; -32007 SlotSkipped for a
// skipped slot below the root; -32009 LongTermStorageSlotSkipped for a skipped slot below the
// node's own ledger (served from long-term storage). The transactions `produce` makes up execute
// nothing: their balances are what a transfer would leave. `produce({ executed })` takes
// transactions already rendered in getTransaction's shape instead (test/helpers/litesvm-cluster.ts:
// executed by litesvm, Solana's real SVM). Calls and bytes sent are counted (`stats`) to measure
// what each read mode costs. A balance given as a bigint is written as a bare JSON number however
// large, as Agave's serde_json writes u64 (an account above 2^53 lamports).

export const key = (): string => encodeBase58(randomBytes(32));
const SYSTEM = '11111111111111111111111111111111';
const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';

export interface SolTransfer {
  to: string;
  lamports: bigint;
  failed?: boolean;
  /** Send as a v0 transaction with the recipient in the lookup-table addresses. */
  viaLookupTable?: boolean;
}
export interface TokenTransfer {
  owner: string;
  mint: string;
  amount: bigint;
  /** The recipient already holds this much in the token account. */
  before?: bigint;
  /** The token program (Token-2022 mints live under TokenzQd…). */
  program?: string;
  /** The recipient's token account (default: a fresh key). */
  account?: string;
}

interface Slot {
  block: Record<string, unknown> | null;
}

/** A transaction as getTransaction (encoding json) and getBlock (transactionDetails full) render it. */
export interface AgaveTransaction {
  transaction: {
    signatures: string[];
    message: {
      header: { numRequiredSignatures: number; numReadonlySignedAccounts: number; numReadonlyUnsignedAccounts: number };
      accountKeys: string[];
      recentBlockhash: string;
      instructions: unknown[];
      addressTableLookups?: unknown[];
    };
  };
  meta: Record<string, unknown> & {
    err: unknown;
    fee: number;
    /** u64: a bigint beyond 2^53, written as a bare JSON number. */
    preBalances: (number | bigint)[];
    postBalances: (number | bigint)[];
    preTokenBalances: unknown[];
    postTokenBalances: unknown[];
    logMessages?: string[];
    loadedAddresses: { writable: string[]; readonly: string[] };
  };
  version: 'legacy' | 0;
}

/** JSON.rawJSON (Node 21+; not in TypeScript's es2023 lib). */
const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;
/** JSON text with bigints as bare numbers, digit for digit: what JSON.stringify alone cannot write. */
const u64Json = (value: unknown): string => JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? rawJSON(v.toString()) : v));

export interface SimOptions {
  /** The blockhash of each new block (default: a random one). */
  nextBlockhash?: () => string;
  /** Methods answered by the caller (a sweep's, over the same chain); undefined: not one of its methods. */
  methods?: (method: string, params: unknown[], chain: ChainView) => { result: unknown } | { error: { code: number; message: string; data?: unknown } } | undefined;
}

/** What an extra method may read of the chain: the slots and where a signature landed. */
export interface ChainView {
  slot: number;
  finalized: number;
  slotOf(signature: string): number | undefined;
}

/** Header of the made-up transactions: the payer signs, the last key (the program) is read-only. */
const HEADER = { numRequiredSignatures: 1, numReadonlySignedAccounts: 0, numReadonlyUnsignedAccounts: 1 };

export interface Produce {
  sol?: SolTransfer[];
  tokens?: TokenTransfer[];
  filler?: number;
  /** Transactions executed elsewhere (litesvm), already rendered; they go first in the block. */
  executed?: AgaveTransaction[];
}

export interface SolanaSim {
  url: string;
  slot(): number;
  produce(txs?: Produce): string[];
  /** getSlot (confirmed) answers this many slots beyond the last block; getBlock there: -32004. */
  announce(count: number): void;
  /** How far getSlot finalized trails the last block. */
  setFinalityLag(slots: number): void;
  stats: { calls: Record<string, number>; bytes: number };
  skip(count?: number): void;
  /** Slots below this are only in long-term storage: a skipped one there answers -32009. */
  setLedgerFloor(slot: number): void;
  /** The next `times` getBlock calls for `slot` answer this instead: a null result, or -32004 whatever the height. */
  failNext(slot: number, answer: 'null' | -32004, times: number): void;
  /** getBlock error answers sent, by code ('null' for a null result forced with failNext). */
  errors: Record<string, number>;
  /** Drops the newest `count` slots (a fork switch; produce again for the new branch). */
  rewind(count: number): void;
  close(): Promise<void>;
}

export async function startSolanaSim(genesisHash = '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d', options: SimOptions = {}): Promise<SolanaSim> {
  const nextBlockhash = options.nextBlockhash ?? key;
  const slots: Slot[] = [{ block: { blockhash: nextBlockhash(), previousBlockhash: key(), parentSlot: 0, blockTime: Math.floor(Date.now() / 1000), blockHeight: 0, transactions: [] } }];
  const lastBlockhash = () => {
    for (let i = slots.length - 1; i >= 0; i--) if (slots[i]!.block) return slots[i]!.block!.blockhash as string;
    return key();
  };
  const lastRealSlot = () => {
    for (let i = slots.length - 1; i >= 0; i--) if (slots[i]!.block) return i;
    return 0;
  };

  let announced = 0;
  let finalityLag = 0;
  let ledgerFloor = 0;
  const forced = new Map<number, { answer: 'null' | -32004; times: number }>();
  const errors: Record<string, number> = {};
  const stats = { calls: {} as Record<string, number>, bytes: 0 };
  const bySignature = new Map<string, { slot: number; tx: Record<string, unknown> }>();
  const byAccount = new Map<string, { signature: string; slot: number; err: unknown }[]>();

  function produce(txs: Produce = {}): string[] {
    const transactions: Record<string, unknown>[] = [...((txs.executed ?? []) as unknown as Record<string, unknown>[])];
    const signatures: string[] = (txs.executed ?? []).map((t) => t.transaction.signatures[0]!);
    for (const t of txs.sol ?? []) {
      const sig = encodeBase58(randomBytes(64));
      signatures.push(sig);
      const payer = key();
      const lookup = Boolean(t.viaLookupTable);
      transactions.push({
        version: lookup ? 0 : 'legacy',
        transaction: { signatures: [sig], message: { header: HEADER, accountKeys: lookup ? [payer, SYSTEM] : [payer, t.to, SYSTEM], recentBlockhash: lastBlockhash(), instructions: [] } },
        meta: {
          err: t.failed ? { InstructionError: [0, 'Custom'] } : null,
          fee: 5000,
          preBalances: lookup ? [10_000_000_000, 1, 0] : [10_000_000_000, 0, 1],
          postBalances: t.failed
            ? lookup ? [9_999_995_000, 1, 0] : [9_999_995_000, 0, 1]
            : lookup ? [10_000_000_000 - 5000 - Number(t.lamports), 1, Number(t.lamports)] : [10_000_000_000 - 5000 - Number(t.lamports), Number(t.lamports), 1],
          preTokenBalances: [],
          postTokenBalances: [],
          loadedAddresses: lookup ? { writable: [t.to], readonly: [] } : { writable: [], readonly: [] },
        },
      });
    }
    for (const t of txs.tokens ?? []) {
      const sig = encodeBase58(randomBytes(64));
      signatures.push(sig);
      const payer = key();
      const amount = (a: bigint) => ({ amount: a.toString(), decimals: 6, uiAmount: Number(a) / 1e6, uiAmountString: String(Number(a) / 1e6) });
      const program = t.program ?? TOKEN_PROGRAM;
      const pre = [{ accountIndex: 1, mint: t.mint, owner: payer, programId: program, uiTokenAmount: amount(10_000_000_000n) }];
      if (t.before !== undefined) pre.push({ accountIndex: 2, mint: t.mint, owner: t.owner, programId: program, uiTokenAmount: amount(t.before) });
      transactions.push({
        version: 'legacy',
        transaction: { signatures: [sig], message: { header: HEADER, accountKeys: [payer, key(), t.account ?? key(), program], recentBlockhash: lastBlockhash(), instructions: [] } },
        meta: {
          err: null,
          fee: 5000,
          preBalances: [10_000_000_000, 2039280, t.before === undefined ? 0 : 2039280, 1],
          postBalances: [10_000_000_000 - 5000 - (t.before === undefined ? 2039280 : 0), 2039280, 2039280, 1],
          preTokenBalances: pre,
          postTokenBalances: [
            { accountIndex: 1, mint: t.mint, owner: payer, programId: program, uiTokenAmount: amount(10_000_000_000n - t.amount) },
            { accountIndex: 2, mint: t.mint, owner: t.owner, programId: program, uiTokenAmount: amount((t.before ?? 0n) + t.amount) },
          ],
          loadedAddresses: { writable: [], readonly: [] },
        },
      });
    }
    // Unrelated traffic, for blocks of realistic size: SOL transfers between strangers.
    for (let i = 0; i < (txs.filler ?? 0); i++) {
      const [from, to] = [key(), key()];
      transactions.push({
        version: 'legacy',
        transaction: { signatures: [encodeBase58(randomBytes(64))], message: { header: HEADER, accountKeys: [from, to, SYSTEM], recentBlockhash: lastBlockhash(), instructions: [] } },
        meta: { err: null, fee: 5000, preBalances: [2_000_000_000, 0, 1], postBalances: [1_899_995_000, 100_000_000, 1], preTokenBalances: [], postTokenBalances: [], loadedAddresses: { writable: [], readonly: [] } },
      });
    }
    const slot = slots.length;
    for (const tx of transactions) {
      const t = tx as unknown as AgaveTransaction;
      const signature = t.transaction.signatures[0]!;
      bySignature.set(signature, { slot, tx });
      for (const account of new Set([...t.transaction.message.accountKeys, ...t.meta.loadedAddresses.writable, ...t.meta.loadedAddresses.readonly])) {
        byAccount.set(account, [{ signature, slot, err: t.meta.err }, ...(byAccount.get(account) ?? [])]);
      }
    }
    slots.push({
      block: {
        blockhash: nextBlockhash(),
        previousBlockhash: lastBlockhash(),
        parentSlot: lastRealSlot(),
        blockTime: Math.floor(Date.now() / 1000),
        blockHeight: slots.filter((s) => s.block).length,
        transactions,
      },
    });
    return signatures;
  }

  /**
   * transactionDetails "accounts": Agave's UiAccountsList (static keys, signer and writable from the
   * message header, then the lookup-table keys, writable ones first) and the simple meta
   * (build_simple_ui_transaction_status_meta: no instructions, logs, loadedAddresses, return data
   * or compute units; rewards only when asked, and the reader does not ask).
   */
  function accountsForm(tx: Record<string, unknown>): Record<string, unknown> {
    const t = tx as unknown as AgaveTransaction;
    const { header, accountKeys } = t.transaction.message;
    const m = t.meta;
    const signers = header.numRequiredSignatures;
    const statics = accountKeys.map((pubkey, i) => ({
      pubkey,
      writable: i < signers ? i < signers - header.numReadonlySignedAccounts : i < accountKeys.length - header.numReadonlyUnsignedAccounts,
      signer: i < signers,
      source: 'transaction',
    }));
    const loaded = [...m.loadedAddresses.writable.map((pubkey) => ({ pubkey, writable: true, signer: false, source: 'lookupTable' })), ...m.loadedAddresses.readonly.map((pubkey) => ({ pubkey, writable: false, signer: false, source: 'lookupTable' }))];
    const meta = { err: m.err, status: m.err === null ? { Ok: null } : { Err: m.err }, fee: m.fee, preBalances: m.preBalances, postBalances: m.postBalances, preTokenBalances: m.preTokenBalances, postTokenBalances: m.postTokenBalances };
    return { transaction: { signatures: t.transaction.signatures, accountKeys: [...statics, ...loaded] }, meta, version: t.version };
  }

  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const call = JSON.parse(body) as { id: unknown; method: string; params?: unknown[] };
      stats.calls[call.method] = (stats.calls[call.method] ?? 0) + 1;
      const reply = (payload: Record<string, unknown>) => {
        const text = u64Json({ jsonrpc: '2.0', ...payload, id: call.id });
        stats.bytes += Buffer.byteLength(text);
        res.writeHead(200, { 'content-type': 'application/json' }).end(text);
      };
      const finalized = Math.max(0, slots.length - 1 - finalityLag);
      if (call.method === 'getGenesisHash') return reply({ result: genesisHash });
      if (call.method === 'getSlot') {
        const commitment = ((call.params?.[0] ?? {}) as { commitment?: string }).commitment;
        return reply({ result: commitment === 'finalized' ? finalized : slots.length - 1 + announced });
      }
      if (call.method === 'getBlock') {
        const n = Number(call.params?.[0]);
        const cfg = (call.params?.[1] ?? {}) as { transactionDetails?: string; commitment?: string };
        const fail = (code: number, message: string) => {
          errors[code] = (errors[code] ?? 0) + 1;
          return reply({ error: { code, message } });
        };
        const notAvailable = () => fail(-32004, `Block not available for slot ${n}`);
        const force = forced.get(n);
        if (force && force.times > 0) {
          force.times--;
          if (force.answer === 'null') errors.null = (errors.null ?? 0) + 1;
          return force.answer === 'null' ? reply({ result: null }) : notAvailable();
        }
        if (n >= slots.length || (cfg.commitment === 'finalized' && n > finalized)) return notAvailable();
        const block = slots[n]!.block;
        if (!block) {
          // Not rooted yet: Agave cannot tell a skipped slot from one it has not received.
          if (n >= finalized) return notAvailable();
          if (n < ledgerFloor) return fail(-32009, `Slot ${n} was skipped, or missing in long-term storage`);
          return fail(-32007, `Slot ${n} was skipped, or missing due to ledger jump to recent snapshot`);
        }
        const { transactions, ...header } = block as { transactions: Record<string, unknown>[] };
        if (cfg.transactionDetails === 'none') return reply({ result: header });
        if (cfg.transactionDetails === 'accounts') return reply({ result: { ...header, transactions: transactions.map(accountsForm) } });
        return reply({ result: block });
      }
      if (call.method === 'getSignaturesForAddress') {
        const account = String(call.params?.[0]);
        const cfg = (call.params?.[1] ?? {}) as { limit?: number; before?: string };
        let list = (byAccount.get(account) ?? []).filter((e) => e.slot <= finalized);
        if (cfg.before) list = list.slice(list.findIndex((e) => e.signature === cfg.before) + 1);
        const timeOf = (slot: number) => (slots[slot]?.block as { blockTime?: number } | null)?.blockTime ?? null;
        return reply({ result: list.slice(0, cfg.limit ?? 1000).map((e) => ({ signature: e.signature, slot: e.slot, err: e.err, memo: null, blockTime: timeOf(e.slot), confirmationStatus: 'finalized' })) });
      }
      if (call.method === 'getTransaction') {
        const found = bySignature.get(String(call.params?.[0]));
        if (!found || found.slot > finalized) return reply({ result: null });
        return reply({ result: { slot: found.slot, blockTime: (slots[found.slot]!.block as { blockTime: number }).blockTime, ...found.tx } });
      }
      const extra = options.methods?.(call.method, call.params ?? [], { slot: slots.length - 1, finalized, slotOf: (sig) => bySignature.get(sig)?.slot });
      if (extra) return reply(extra);
      return reply({ error: { code: -32601, message: 'Method not found' } });
    });
  });
  const local = await listenLocal(server);
  return {
    url: local.url,
    slot: () => slots.length - 1,
    produce,
    announce: (count: number) => {
      announced = count;
    },
    setFinalityLag: (lag: number) => {
      finalityLag = lag;
    },
    stats,
    errors,
    setLedgerFloor: (slot: number) => {
      ledgerFloor = slot;
    },
    failNext: (slot: number, answer: 'null' | -32004, times: number) => {
      forced.set(slot, { answer, times });
    },
    skip: (count = 1) => {
      for (let i = 0; i < count; i++) slots.push({ block: null });
    },
    rewind: (count) => {
      slots.splice(slots.length - count, count);
    },
    close: local.close,
  };
}
