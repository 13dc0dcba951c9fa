import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { encodeBase58 } from '../../src/chains/base58check.ts';
import { listenLocal } from './local-server.ts';

// A Solana cluster behind its JSON-RPC API (getGenesisHash, getSlot, getBlock with
// transactionDetails full|none, encoding json), serving blocks in the shape validators return:
// account keys, lamport balances before and after, token balances with owner and mint, errors for
// skipped slots. Nothing executes; the balances are what a transfer would leave.

export const key = (): string => encodeBase58(randomBytes(32));
const SYSTEM = '11111111111111111111111111111111';
const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';

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
}

interface Slot {
  block: Record<string, unknown> | null;
}

export interface SolanaSim {
  url: string;
  slot(): number;
  produce(txs?: { sol?: SolTransfer[]; tokens?: TokenTransfer[] }): string[];
  skip(count?: number): void;
  /** Drops the newest `count` slots (a fork switch; produce again for the new branch). */
  rewind(count: number): void;
  close(): Promise<void>;
}

export async function startSolanaSim(genesisHash = '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d'): Promise<SolanaSim> {
  const slots: Slot[] = [{ block: { blockhash: key(), previousBlockhash: key(), parentSlot: 0, blockTime: Math.floor(Date.now() / 1000), blockHeight: 0, transactions: [] } }];
  const lastBlockhash = () => {
    for (let i = slots.length - 1; i >= 0; i--) if (slots[i]!.block) return slots[i]!.block!.blockhash as string;
    return key();
  };
  const lastRealSlot = () => {
    for (let i = slots.length - 1; i >= 0; i--) if (slots[i]!.block) return i;
    return 0;
  };

  function produce(txs: { sol?: SolTransfer[]; tokens?: TokenTransfer[] } = {}): string[] {
    const transactions: unknown[] = [];
    const signatures: string[] = [];
    for (const t of txs.sol ?? []) {
      const sig = encodeBase58(randomBytes(64));
      signatures.push(sig);
      const payer = key();
      const lookup = Boolean(t.viaLookupTable);
      transactions.push({
        version: lookup ? 0 : 'legacy',
        transaction: { signatures: [sig], message: { accountKeys: lookup ? [payer, SYSTEM] : [payer, t.to, SYSTEM], recentBlockhash: lastBlockhash(), instructions: [] } },
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
      const pre = [{ accountIndex: 1, mint: t.mint, owner: payer, programId: TOKEN_PROGRAM, uiTokenAmount: amount(10_000_000_000n) }];
      if (t.before !== undefined) pre.push({ accountIndex: 2, mint: t.mint, owner: t.owner, programId: TOKEN_PROGRAM, uiTokenAmount: amount(t.before) });
      transactions.push({
        version: 'legacy',
        transaction: { signatures: [sig], message: { accountKeys: [payer, key(), key(), TOKEN_PROGRAM], recentBlockhash: lastBlockhash(), instructions: [] } },
        meta: {
          err: null,
          fee: 5000,
          preBalances: [10_000_000_000, 2039280, t.before === undefined ? 0 : 2039280, 1],
          postBalances: [10_000_000_000 - 5000 - (t.before === undefined ? 2039280 : 0), 2039280, 2039280, 1],
          preTokenBalances: pre,
          postTokenBalances: [
            { accountIndex: 1, mint: t.mint, owner: payer, programId: TOKEN_PROGRAM, uiTokenAmount: amount(10_000_000_000n - t.amount) },
            { accountIndex: 2, mint: t.mint, owner: t.owner, programId: TOKEN_PROGRAM, uiTokenAmount: amount((t.before ?? 0n) + t.amount) },
          ],
          loadedAddresses: { writable: [], readonly: [] },
        },
      });
    }
    slots.push({
      block: {
        blockhash: key(),
        previousBlockhash: lastBlockhash(),
        parentSlot: lastRealSlot(),
        blockTime: Math.floor(Date.now() / 1000),
        blockHeight: slots.filter((s) => s.block).length,
        transactions,
      },
    });
    return signatures;
  }

  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const call = JSON.parse(body) as { id: unknown; method: string; params?: unknown[] };
      const reply = (payload: Record<string, unknown>) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, ...payload }));
      if (call.method === 'getGenesisHash') return reply({ result: genesisHash });
      if (call.method === 'getSlot') return reply({ result: slots.length - 1 });
      if (call.method === 'getBlock') {
        const n = Number(call.params?.[0]);
        const cfg = (call.params?.[1] ?? {}) as { transactionDetails?: string };
        if (n >= slots.length) return reply({ error: { code: -32004, message: `Block not available for slot ${n}` } });
        const block = slots[n]!.block;
        if (!block) return reply({ error: { code: -32007, message: `Slot ${n} was skipped, or missing due to ledger jump to recent snapshot` } });
        if (cfg.transactionDetails === 'none') {
          const { transactions: _omit, ...header } = block;
          return reply({ result: header });
        }
        return reply({ result: block });
      }
      return reply({ error: { code: -32601, message: 'Method not found' } });
    });
  });
  const local = await listenLocal(server);
  return {
    url: local.url,
    slot: () => slots.length - 1,
    produce,
    skip: (count = 1) => {
      for (let i = 0; i < count; i++) slots.push({ block: null });
    },
    rewind: (count) => {
      slots.splice(slots.length - count, count);
    },
    close: local.close,
  };
}
