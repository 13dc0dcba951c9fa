import { createServer } from 'node:http';
import { LiteSVM, FailedTransactionMetadata } from 'litesvm';
import {
  address,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressDecoder,
  getBase58Decoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import { findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstruction, getInitializeMint2Instruction, getMintToInstruction, getTransferCheckedInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/load-config.ts';
import { resolveChains } from '../../src/families/families.ts';
import type { SignedSweepTx, SweepKey, SweepPlan } from '../../src/families/sweep.ts';
import { solanaSweepSender } from '../../src/families/solana/sweep-send.ts';
import { solanaSweepSigner } from '../../src/families/solana/sweep-sign.ts';
import { listenLocal } from './local-server.ts';

// A Solana cluster for sweeps: Solana's real SVM (litesvm 1.4.1, with the System, SPL Token,
// Token-2022 and Associated Token Account programs it ships) behind the JSON-RPC methods a sweep
// uses, in Agave's shapes (Agave 2.x / 3.0, rpc/src/rpc.rs; account-decoder/src/parse_token.rs
// for jsonParsed token accounts):
//
// - getMultipleAccounts (base64, dataSlice): { context: { slot }, value: [null | { data: [b64,
//   "base64"], executable, lamports, owner, rentEpoch, space }] }
// - getTokenAccountsByOwner (programId filter, jsonParsed): { context, value: [{ pubkey, account:
//   { data: { program: "spl-token" | "spl-token-2022", parsed: { info: { isNative, mint, owner,
//   state, tokenAmount: { amount, decimals, uiAmount, uiAmountString }, closeAuthority? },
//   type: "account" }, space }, executable, lamports, owner, rentEpoch, space } }] }
// - getLatestBlockhash: { context, value: { blockhash, lastValidBlockHeight } }
// - getMinimumBalanceForRentExemption: a number; getFeeForMessage: { context, value: number | null }
// - isBlockhashValid: { context, value: boolean }
// - sendTransaction (base64, preflight): the signature, or the preflight error -32002 "Transaction
//   simulation failed: …" with data { err, logs, … }; "already been processed" for a repeat.
// - getSignatureStatuses: { context, value: [null | { slot, confirmations, err, status,
//   confirmationStatus }] }; getTransaction: null until finalized, then { slot, blockTime, meta:
//   { err, fee, preBalances, postBalances, logMessages, status }, transaction, version }.
//
// A transaction is "confirmed" once executed and "finalized" after finalize(). litesvm accepts only
// its latest blockhash, so expireBlockhash() is a plan's blockhash growing too old.

export interface Mint {
  address: Address;
  program: Address;
  decimals: number;
}

export interface SweepCluster {
  url: string;
  svm: LiteSVM;
  usdc: Mint;
  lookAlike: Mint;
  /** A USDC-like mint under Token-2022 (its associated token accounts carry the ImmutableOwner extension: 170 bytes). */
  usdc2022: Mint;
  calls: Record<string, number>;
  /** Makes `to` a plain wallet holding `amount` lamports (set directly, as a snapshot would have it). */
  fund(to: Address, amount: bigint): void;
  /** The buyer creates the owner's associated token account (paying its rent) and transferChecked into it. */
  sendToken(mint: Mint, owner: Address, amount: bigint): Promise<void>;
  tokenBalance(mint: Mint, owner: Address): bigint | null;
  lamports(address: Address): bigint;
  finalize(): void;
  expireBlockhash(): void;
  close(): Promise<void>;
}

const TOKEN_2022 = address('TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb');
const b58 = getBase58Decoder();
const addressOf = getAddressDecoder();
const u64 = (v: bigint): number | bigint => (v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v);
const readU64 = (d: Uint8Array, o: number) => new DataView(d.buffer, d.byteOffset, d.byteLength).getBigUint64(o, true);
const readU32 = (d: Uint8Array, o: number) => new DataView(d.buffer, d.byteOffset, d.byteLength).getUint32(o, true);

function uiAmountString(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const s = amount.toString().padStart(decimals + 1, '0');
  const frac = s.slice(-decimals).replace(/0+$/, '');
  return frac ? `${s.slice(0, -decimals)}.${frac}` : s.slice(0, -decimals);
}

/** JSON with bigints as bare numbers, as Agave writes u64. */
function u64Json(value: unknown): string {
  const marks: string[] = [];
  const text = JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `\u0000${marks.push(v.toString()) - 1}\u0000` : v));
  return text.replace(/"\\u0000(\d+)\\u0000"/g, (_m, i: string) => marks[Number(i)]!);
}

export async function startSweepCluster(): Promise<SweepCluster> {
  const svm = new LiteSVM();
  const buyer = await generateKeyPairSigner();
  svm.airdrop(buyer.address, lamports(1_000_000_000_000n));
  const calls: Record<string, number> = {};
  const statuses = new Map<string, { slot: number; err: unknown; fee: bigint; final: boolean; pre: bigint[]; post: bigint[]; logs: string[] }>();
  let slot = 10;

  async function execute(instructions: Instruction[], payer: KeyPairSigner = buyer): Promise<void> {
    const tx = await signTransactionMessageWithSigners(
      pipe(
        createTransactionMessage({ version: 'legacy' }),
        (m) => setTransactionMessageFeePayerSigner(payer, m),
        (m) => svm.setTransactionMessageLifetimeUsingLatestBlockhash(m),
        (m) => appendTransactionMessageInstructions(instructions, m),
      ),
    );
    const result = svm.sendTransaction(tx);
    if (result instanceof FailedTransactionMetadata) throw new Error(`setup transaction failed: ${result.toString()}`);
  }

  async function createMint(program: Address, decimals: number): Promise<Mint> {
    const mint = await generateKeyPairSigner();
    await execute([
      getCreateAccountInstruction({ payer: buyer, newAccount: mint, lamports: svm.minimumBalanceForRentExemption(82n), space: 82, programAddress: program }),
      getInitializeMint2Instruction({ mint: mint.address, decimals, mintAuthority: buyer.address }, { programAddress: program }),
    ]);
    const [ata] = await findAssociatedTokenPda({ owner: buyer.address, mint: mint.address, tokenProgram: program });
    await execute([
      getCreateAssociatedTokenIdempotentInstruction({ payer: buyer, owner: buyer.address, mint: mint.address, ata, tokenProgram: program }),
      getMintToInstruction({ mint: mint.address, token: ata, mintAuthority: buyer, amount: 1_000_000n * 10n ** BigInt(decimals) }, { programAddress: program }),
    ]);
    return { address: mint.address, program, decimals };
  }

  function decimalsOf(mint: string): number {
    const account = svm.getAccount(address(mint));
    return account.exists ? account.data[44]! : 0;
  }

  /** Agave's UiTokenAccount for SPL Token's Account layout (Token-2022: the same base, then extensions). */
  function parsedTokenAccount(data: Uint8Array, program: string) {
    const mint = addressOf.decode(data.subarray(0, 32));
    const amount = readU64(data, 64);
    const decimals = decimalsOf(mint);
    const state = ['uninitialized', 'initialized', 'frozen'][data[108]!] ?? 'uninitialized';
    const info: Record<string, unknown> = {
      isNative: readU32(data, 109) === 1,
      mint,
      owner: addressOf.decode(data.subarray(32, 64)),
      state,
      tokenAmount: { amount: amount.toString(), decimals, uiAmount: Number(amount) / 10 ** decimals, uiAmountString: uiAmountString(amount, decimals) },
    };
    if (readU32(data, 129) === 1) info.closeAuthority = addressOf.decode(data.subarray(133, 165));
    if (program === TOKEN_2022 && data.length > 165) info.extensions = [{ extension: 'immutableOwner' }];
    return { program: program === TOKEN_2022 ? 'spl-token-2022' : 'spl-token', parsed: { info, type: 'account' }, space: data.length };
  }

  function balances(keys: readonly Address[]): bigint[] {
    return keys.map((k) => BigInt(svm.getBalance(k) ?? 0n));
  }

  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const call = JSON.parse(body) as { id: unknown; method: string; params?: unknown[] };
      calls[call.method] = (calls[call.method] ?? 0) + 1;
      const p = call.params ?? [];
      const reply = (payload: Record<string, unknown>) => res.writeHead(200, { 'content-type': 'application/json' }).end(u64Json({ jsonrpc: '2.0', ...payload, id: call.id }));
      const context = { slot, apiVersion: '2.2.16' };
      switch (call.method) {
        case 'getMultipleAccounts': {
          const value = (p[0] as string[]).map((key) => {
            const a = svm.getAccount(address(key));
            if (!a.exists) return null;
            return { data: ['', 'base64'], executable: a.executable, lamports: u64(a.lamports), owner: a.programAddress, rentEpoch: 18446744073709551615n, space: Number(a.space) };
          });
          return reply({ result: { context, value } });
        }
        case 'getTokenAccountsByOwner': {
          const owner = String(p[0]);
          const program = (p[1] as { programId: string }).programId;
          const value = svm
            .getProgramAccounts(address(program))
            .filter((a) => a.data.length >= 165 && a.data[108] !== 0 && addressOf.decode(a.data.subarray(32, 64)) === owner && (a.data.length === 165 || a.data[165] === 2))
            .map((a) => ({ pubkey: a.address, account: { data: parsedTokenAccount(new Uint8Array(a.data), program), executable: false, lamports: u64(a.lamports), owner: program, rentEpoch: 18446744073709551615n, space: a.data.length } }));
          return reply({ result: { context, value } });
        }
        case 'getLatestBlockhash':
          return reply({ result: { context, value: { blockhash: svm.latestBlockhash(), lastValidBlockHeight: slot + 150 } } });
        case 'getMinimumBalanceForRentExemption':
          return reply({ result: u64(svm.minimumBalanceForRentExemption(BigInt(Number(p[0])))) });
        case 'getFeeForMessage': {
          const message = getCompiledTransactionMessageDecoder().decode(new Uint8Array(Buffer.from(String(p[0]), 'base64')));
          const known = message.lifetimeToken === svm.latestBlockhash();
          return reply({ result: { context, value: known ? 5000 * message.header.numSignerAccounts : null } });
        }
        case 'isBlockhashValid':
          return reply({ result: { context, value: String(p[0]) === svm.latestBlockhash() } });
        case 'sendTransaction': {
          const tx = getTransactionDecoder().decode(new Uint8Array(Buffer.from(String(p[0]), 'base64')));
          const signature = b58.decode(Object.values(tx.signatures)[0]!);
          if (statuses.has(signature)) {
            return reply({ error: { code: -32002, message: 'Transaction simulation failed: This transaction has already been processed', data: { err: 'AlreadyProcessed', logs: [], accounts: null, unitsConsumed: 0 } } });
          }
          const simulated = svm.simulateTransaction(tx);
          if (simulated instanceof FailedTransactionMetadata) {
            return reply({ error: { code: -32002, message: `Transaction simulation failed: ${simulated.err().toString()}`, data: { err: simulated.err().toString(), logs: simulated.meta().logs(), accounts: null, unitsConsumed: Number(simulated.meta().computeUnitsConsumed()) } } });
          }
          const keys = getCompiledTransactionMessageDecoder().decode(tx.messageBytes).staticAccounts;
          const pre = balances(keys);
          const result = svm.sendTransaction(tx);
          const post = balances(keys);
          const failed = result instanceof FailedTransactionMetadata;
          const meta = failed ? result.meta() : result;
          slot += 1;
          statuses.set(signature, { slot, err: failed ? result.err().toString() : null, fee: pre.reduce((a, b) => a + b, 0n) - post.reduce((a, b) => a + b, 0n), final: false, pre, post, logs: meta.logs() });
          return reply({ result: signature });
        }
        case 'getSignatureStatuses': {
          const value = (p[0] as string[]).map((sig) => {
            const s = statuses.get(sig);
            if (!s) return null;
            return { slot: s.slot, confirmations: s.final ? null : 1, err: s.err, status: s.err === null ? { Ok: null } : { Err: s.err }, confirmationStatus: s.final ? 'finalized' : 'confirmed' };
          });
          return reply({ result: { context, value } });
        }
        case 'getTransaction': {
          const s = statuses.get(String(p[0]));
          if (!s?.final) return reply({ result: null });
          return reply({
            result: {
              slot: s.slot,
              blockTime: 1_764_000_000 + s.slot,
              meta: { err: s.err, status: s.err === null ? { Ok: null } : { Err: s.err }, fee: u64(s.fee), preBalances: s.pre.map(u64), postBalances: s.post.map(u64), logMessages: s.logs },
              transaction: { signatures: [String(p[0])] },
              version: 'legacy',
            },
          });
        }
        default:
          return reply({ error: { code: -32601, message: 'Method not found' } });
      }
    });
  });
  const local = await listenLocal(server);

  const usdc = await createMint(TOKEN_PROGRAM_ADDRESS, 6);
  const lookAlike = await createMint(TOKEN_PROGRAM_ADDRESS, 6);
  const usdc2022 = await createMint(TOKEN_2022, 6);

  return {
    url: local.url,
    svm,
    usdc,
    lookAlike,
    usdc2022,
    calls,
    fund(to, amount) {
      svm.setAccount({ address: to, lamports: lamports(amount), data: new Uint8Array(), executable: false, programAddress: address('11111111111111111111111111111111'), space: 0n });
    },
    async sendToken(mint, owner, amount) {
      const [source] = await findAssociatedTokenPda({ owner: buyer.address, mint: mint.address, tokenProgram: mint.program });
      const [ata] = await findAssociatedTokenPda({ owner, mint: mint.address, tokenProgram: mint.program });
      await execute([
        getCreateAssociatedTokenIdempotentInstruction({ payer: buyer, owner, mint: mint.address, ata, tokenProgram: mint.program }),
        getTransferCheckedInstruction({ source, mint: mint.address, destination: ata, authority: buyer, amount, decimals: mint.decimals }, { programAddress: mint.program }),
      ]);
    },
    tokenBalance(mint, owner) {
      const ata = svm.getProgramAccounts(mint.program).find((a) => addressOf.decode(a.data.subarray(32, 64)) === owner && addressOf.decode(a.data.subarray(0, 32)) === mint.address);
      return ata ? readU64(new Uint8Array(ata.data), 64) : null;
    },
    lamports: (a) => BigInt(svm.getBalance(a) ?? 0n),
    finalize() {
      for (const s of statuses.values()) s.final = true;
    },
    expireBlockhash: () => svm.expireBlockhash(),
    close: local.close,
  };
}

// The family's three steps against a cluster, as the sweep and refund tests drive them.

/** A configuration whose solana mainnet is the cluster, with `mint` as its USDC. */
export function sweepWorld(cluster: SweepCluster, mint = cluster.usdc.address) {
  const { config } = loadConfig({ env: {}, overrides: { chains: { solana: { mainnet: { rpcUrl: cluster.url, tokens: { USDC: { address: mint, decimals: 6 } } } } }, indexer: { rpcTimeoutMs: 2000 } } });
  const network = resolveChains(config.chains).chains.solana.mainnet;
  return { config, network };
}

/** A plan file's content around the planner's parts; `extra` makes it a refund (kind, refund). */
export function planOf(parts: Pick<SweepPlan, 'deposits' | 'skipped' | 'transactions'>, to: string, feePayer: string | null, extra: Partial<SweepPlan> = {}): SweepPlan {
  return { format: 'chaingate-sweep-plan/1', id: 'test', kind: 'sweep', chain: 'solana', family: 'solana', network: 'MAINNET', testnet: false, to, feePayer, createdAt: new Date().toISOString(), ...parts, ...extra };
}

/** What `sweep sign` does with the seed: every deposit's key and the fee payer's (if any), each searched among the first 50 accounts. */
export function keysFor(seed: Uint8Array, plan: SweepPlan): Map<string, SweepKey> {
  const keys = new Map<string, SweepKey>();
  for (const d of plan.deposits) keys.set(d.address, solanaSweepSigner.deriveKey(seed, d, plan, 50));
  if (plan.feePayer !== null) keys.set(plan.feePayer, solanaSweepSigner.deriveKey(seed, { address: plan.feePayer, derivationIndex: null, source: 'fee-payer' }, plan, 50));
  return keys;
}

/** Sends every transaction, sees each confirmed, finalizes the cluster and returns the final statuses. */
export async function broadcastAll(cluster: SweepCluster, w: ReturnType<typeof sweepWorld>, signed: SignedSweepTx[]) {
  for (const tx of signed) assert.deepEqual(await solanaSweepSender.broadcast(w.network, w.config, tx), { accepted: true }, tx.id);
  for (const tx of signed) assert.equal((await solanaSweepSender.status(w.network, w.config, tx.txid)).state, 'pending', 'confirmed, not finalized yet');
  cluster.finalize();
  return Promise.all(signed.map((tx) => solanaSweepSender.status(w.network, w.config, tx.txid)));
}
