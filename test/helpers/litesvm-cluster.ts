import { LiteSVM, FailedTransactionMetadata, type TransactionMetadata } from 'litesvm';
import {
  address,
  appendTransactionMessageInstructions,
  compressTransactionMessageUsingAddressLookupTables,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressDecoder,
  getAddressEncoder,
  getBase58Decoder,
  getBase64Decoder,
  getCompiledTransactionMessageDecoder,
  getProgramDerivedAddress,
  getSignatureFromTransaction,
  getTransactionDecoder,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  signTransactionMessageWithSigners,
  AccountRole,
  type Address,
  type Instruction,
  type KeyPairSigner,
  type Transaction,
} from '@solana/kit';
import { getCreateAccountInstruction, getTransferSolInstruction, SYSTEM_PROGRAM_ADDRESS } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction,
  getMintToInstruction,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { startSolanaSim, type AgaveTransaction, type ChainView, type SolanaSim } from './solana-sim.ts';

// A Solana cluster whose transactions are executed by Solana's real SVM (litesvm 1.4.1: the
// Agave runtime with the System, SPL Token, Token-2022, Associated Token Account and Address
// Lookup Table programs it ships), served over JSON-RPC by test/helpers/solana-sim.ts's server
// in Agave's wire shapes (Agave 2.x / 3.0; rpc/src/rpc.rs, transaction-status/src/lib.rs and
// transaction-status-client-types, account-decoder/src/parse_token.rs):
//
// - getBlock, encoding "json": { blockHeight, blockTime, blockhash, parentSlot, previousBlockhash,
//   transactions: [{ transaction, meta, version }] }. transactionDetails "full": transaction =
//   { signatures, message: { header: { numRequiredSignatures, numReadonlySignedAccounts,
//   numReadonlyUnsignedAccounts }, accountKeys, recentBlockhash, instructions: [{ programIdIndex,
//   accounts, data (base58), stackHeight: null }], addressTableLookups (v0 only: { accountKey,
//   writableIndexes, readonlyIndexes }) } }; meta = { err, status, fee, preBalances,
//   postBalances, innerInstructions: [{ index, instructions: [{ …, stackHeight }] }],
//   logMessages, preTokenBalances, postTokenBalances, rewards, loadedAddresses: { writable,
//   readonly }, returnData (when a program set one: { programId, data: [base64, "base64"] }),
//   computeUnitsConsumed }. transactionDetails "accounts" (UiAccountsList and
//   build_simple_ui_transaction_status_meta): transaction = { signatures, accountKeys: [{ pubkey,
//   writable, signer, source: "transaction" | "lookupTable" }] }; meta = { err, status, fee,
//   preBalances, postBalances, preTokenBalances, postTokenBalances }.
// - getTransaction (encoding "json"): { slot, blockTime, transaction, meta, version } as above.
// - getSignaturesForAddress: [{ signature, slot, err, memo, blockTime, confirmationStatus }].
// - getSlot, getGenesisHash.
// - A token balance: { accountIndex, mint, uiTokenAmount: { uiAmount, decimals, amount,
//   uiAmountString }, owner, programId }. err as serde renders TransactionError:
//   { "InstructionError": [1, { "Custom": 1 }] }.
//
// What comes from litesvm's execution: the signed transaction's compiled message (header, keys,
// instructions, lookups), the error, the log messages, inner instructions with stack heights,
// return data and compute units. litesvm does not report balances or token balances, so they are
// read from its accounts just before and just after each transaction: lamports for pre/post
// balances, and each key's SPL token account data decoded as Agave's token balance collection does
// (ledger token_balances: an account owned by the Token or Token-2022 program that unpacks as a
// token account, decimals from its mint; an account that did not exist yet has no pre balance).
// The fee is what left the transaction's accounts in total (lamports are conserved otherwise).
// Lamports are u64: a balance beyond 2^53 stays a bigint and is served as a bare JSON number.
// Not given: costUnits (Agave's cost model is not in litesvm; Agave omits it when unknown too).
// Transactions wait in `pending` until `seal()` puts them in the next slot; a block's blockhash is
// litesvm's next blockhash, so each transaction's recentBlockhash is the previous block's.

const TOKEN_2022 = address('TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb');
const LOOKUP_TABLE_PROGRAM = address('AddressLookupTab1e1111111111111111111111111');
const TOKEN_PROGRAMS = new Set<string>([TOKEN_PROGRAM_ADDRESS, TOKEN_2022]);
const TOKEN_ACCOUNT_LEN = 165;
const ACCOUNT_TYPE_ACCOUNT = 2; // Token-2022's AccountType byte after the base layout

export interface Mint {
  address: Address;
  program: Address;
  decimals: number;
}

export interface Executed {
  signature: string;
  /** The transaction as getTransaction / full getBlock render it. */
  rendered: AgaveTransaction;
}

export interface LitesvmCluster {
  url: string;
  svm: LiteSVM;
  /** The chain server: slots, finality lag, call counts (test/helpers/solana-sim.ts). */
  sim: SolanaSim;
  buyer: KeyPairSigner;
  /** A USDC-like mint under the classic SPL Token program, 6 decimals, the buyer holding 1,000. */
  usdc: Mint;
  /** Another mint with the same decimals under the same program: a look-alike. */
  lookAlike: Mint;
  /** A mint under Token-2022, 6 decimals. */
  usdc2022: Mint;
  /**
   * SystemProgram transfer from the buyer, or from `from` (the buyer still pays the fee);
   * `viaLookupTable`: a v0 transaction whose recipient comes from an address lookup table.
   */
  sendSol(to: string, amount: bigint, options?: { viaLookupTable?: boolean; from?: KeyPairSigner }): Promise<Executed>;
  /** A system account holding `lamports` (set directly, as a snapshot would have it: above 2^53 if asked). */
  fund(lamports: bigint): Promise<KeyPairSigner>;
  /** A transfer to `to` followed by a transfer the buyer cannot afford: the transaction fails and is rolled back, the fee is charged. */
  sendSolThenFail(to: string, amount: bigint): Promise<Executed>;
  /** Creates the owner's associated token account if missing (idempotent) and transferChecked into it. */
  sendToken(mint: Mint, owner: string, amount: bigint): Promise<Executed>;
  /** Puts the pending transactions in a new slot; returns their signatures. */
  seal(): string[];
  /** Empty slots. */
  mine(count: number): void;
  close(): Promise<void>;
}

/** A u64 as Agave's JSON has it: a number, or a bigint where a number would round (beyond 2^53). */
const u64 = (v: bigint): number | bigint => (v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v);

const b58 = getBase58Decoder();
const b64 = getBase64Decoder();
const addressOf = getAddressDecoder();

/** real_number_string_trimmed (account-decoder): the amount with `decimals` places, trailing zeros dropped. */
function uiAmountString(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const s = amount.toString().padStart(decimals + 1, '0');
  const whole = s.slice(0, -decimals);
  const frac = s.slice(-decimals).replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole;
}

interface TokenState {
  mint: string;
  owner: string;
  amount: bigint;
  programId: string;
}

function readU64(data: Uint8Array, offset: number): bigint {
  return new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(offset, true);
}

/** The token account at `key`, if it is one (SPL Token's Account layout; Token-2022 with or without extensions). */
function tokenState(svm: LiteSVM, key: Address): TokenState | null {
  const account = svm.getAccount(key);
  if (!account.exists || !TOKEN_PROGRAMS.has(account.programAddress)) return null;
  const data = account.data;
  if (data.length < TOKEN_ACCOUNT_LEN) return null;
  if (data.length > TOKEN_ACCOUNT_LEN && (account.programAddress !== TOKEN_2022 || data[TOKEN_ACCOUNT_LEN] !== ACCOUNT_TYPE_ACCOUNT)) return null;
  if (data[108] === 0) return null; // AccountState::Uninitialized
  return { mint: addressOf.decode(data.subarray(0, 32)), owner: addressOf.decode(data.subarray(32, 64)), amount: readU64(data, 64), programId: account.programAddress };
}

/** The Mint layout's decimals byte (after the COption authority and the supply). */
function mintDecimals(svm: LiteSVM, mint: string): number {
  const account = svm.getAccount(address(mint));
  if (!account.exists) throw new Error(`mint ${mint} not found`);
  return account.data[44]!;
}

function tokenBalances(svm: LiteSVM, keys: Address[], invoked: Set<number>) {
  const out: Record<string, unknown>[] = [];
  keys.forEach((key, accountIndex) => {
    if (invoked.has(accountIndex) || TOKEN_PROGRAMS.has(key)) return;
    const state = tokenState(svm, key);
    if (!state) return;
    const decimals = mintDecimals(svm, state.mint);
    out.push({
      accountIndex,
      mint: state.mint,
      uiTokenAmount: { uiAmount: Number(state.amount) / 10 ** decimals, decimals, amount: state.amount.toString(), uiAmountString: uiAmountString(state.amount, decimals) },
      owner: state.owner,
      programId: state.programId,
    });
  });
  return out;
}

/** litesvm's TransactionError as serde_json renders Agave's (only the kinds a block can hold). */
function errJson(failure: FailedTransactionMetadata): unknown {
  const err = failure.err() as unknown;
  if (typeof err === 'object' && err !== null && 'index' in err && typeof (err as { err?: unknown }).err === 'function') {
    const inner = (err as { index: number; err(): unknown }).err();
    if (typeof inner === 'object' && inner !== null && 'code' in inner) return { InstructionError: [(err as { index: number }).index, { Custom: Number((inner as { code: number }).code) }] };
  }
  if (typeof err === 'object' && err !== null && 'accountIndex' in err && String(err).includes('InsufficientFundsForRent')) {
    return { InsufficientFundsForRent: { account_index: (err as { accountIndex: number }).accountIndex } };
  }
  // A fee-level failure (blockhash not found, fee payer cannot pay): Agave does not put it in a block.
  throw new Error(`litesvm rejected the transaction before execution (${failure.toString()}); it would not be in a block`);
}

/** Addresses stored in an address lookup table account (LookupTableMeta is 56 bytes). */
function lookupTableAddresses(svm: LiteSVM, table: Address): Address[] {
  const account = svm.getAccount(table);
  if (!account.exists) throw new Error(`lookup table ${table} not found`);
  const out: Address[] = [];
  for (let offset = 56; offset + 32 <= account.data.length; offset += 32) out.push(addressOf.decode(account.data.subarray(offset, offset + 32)));
  return out;
}

export async function startLitesvmCluster(): Promise<LitesvmCluster> {
  const svm = new LiteSVM();
  const buyer = await generateKeyPairSigner();
  svm.airdrop(buyer.address, lamports(1_000_000_000_000n));
  let pending: AgaveTransaction[] = [];
  const sim = await startSolanaSim(undefined, {
    nextBlockhash: () => {
      svm.expireBlockhash();
      return svm.latestBlockhash();
    },
    methods: (method, params, chain) => sweepMethod(method, params, chain),
  });
  /** Errors of the transactions sent over sendTransaction, by signature. */
  const sent = new Map<string, unknown>();

  /** Signs (the buyer pays; other signers ride in the instructions' account metas), executes, renders and queues one transaction. */
  async function execute(instructions: Instruction[], lookup?: { table: Address; addresses: Address[] }): Promise<Executed> {
    const lifetime = <M extends Parameters<LiteSVM['setTransactionMessageLifetimeUsingLatestBlockhash']>[0]>(m: M) => svm.setTransactionMessageLifetimeUsingLatestBlockhash(m);
    const tx = lookup
      ? await signTransactionMessageWithSigners(
          pipe(
            createTransactionMessage({ version: 0 }),
            (m) => setTransactionMessageFeePayerSigner(buyer, m),
            lifetime,
            (m) => appendTransactionMessageInstructions(instructions, m),
            (m) => compressTransactionMessageUsingAddressLookupTables(m, { [lookup.table]: lookup.addresses }),
          ),
        )
      : await signTransactionMessageWithSigners(
          pipe(
            createTransactionMessage({ version: 'legacy' }),
            (m) => setTransactionMessageFeePayerSigner(buyer, m),
            lifetime,
            (m) => appendTransactionMessageInstructions(instructions, m),
          ),
        );
    return run(tx);
  }

  /** Executes a signed transaction, renders it as Agave would and queues it for the next slot. */
  function run(tx: Transaction): Executed {
    const compiled = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
    if (compiled.version === 1) throw new Error('v1 transactions are not rendered');
    const lookups = compiled.version === 0 ? (compiled.addressTableLookups ?? []) : [];
    const loaded = { writable: [] as Address[], readonly: [] as Address[] };
    for (const l of lookups) {
      const stored = lookupTableAddresses(svm, l.lookupTableAddress);
      loaded.writable.push(...l.writableIndexes.map((i) => stored[i]!));
      loaded.readonly.push(...l.readonlyIndexes.map((i) => stored[i]!));
    }
    const keys = [...compiled.staticAccounts, ...loaded.writable, ...loaded.readonly];
    const invoked = new Set(compiled.instructions.map((ix) => ix.programAddressIndex));
    const balances = () => keys.map((k) => BigInt(svm.getBalance(k) ?? 0n));

    const preBalances = balances();
    const preTokenBalances = tokenBalances(svm, keys, invoked);
    const result = svm.sendTransaction(tx);
    const postBalances = balances();
    const postTokenBalances = tokenBalances(svm, keys, invoked);

    const failed = result instanceof FailedTransactionMetadata;
    const err = failed ? errJson(result) : null;
    const meta: TransactionMetadata = failed ? result.meta() : result;
    const fee = preBalances.reduce((a, b) => a + b, 0n) - postBalances.reduce((a, b) => a + b, 0n);
    const returnData = meta.returnData();
    const signature = getSignatureFromTransaction(tx);
    const rendered: AgaveTransaction = {
      transaction: {
        signatures: [signature],
        message: {
          header: {
            numRequiredSignatures: compiled.header.numSignerAccounts,
            numReadonlySignedAccounts: compiled.header.numReadonlySignerAccounts,
            numReadonlyUnsignedAccounts: compiled.header.numReadonlyNonSignerAccounts,
          },
          accountKeys: compiled.staticAccounts,
          recentBlockhash: compiled.lifetimeToken,
          instructions: compiled.instructions.map((ix) => ({ programIdIndex: ix.programAddressIndex, accounts: [...(ix.accountIndices ?? [])], data: b58.decode(ix.data ?? new Uint8Array()), stackHeight: null })),
          ...(compiled.version === 0 ? { addressTableLookups: lookups.map((l) => ({ accountKey: l.lookupTableAddress, writableIndexes: [...l.writableIndexes], readonlyIndexes: [...l.readonlyIndexes] })) } : {}),
        },
      },
      meta: {
        err,
        status: err === null ? { Ok: null } : { Err: err },
        fee: Number(fee),
        preBalances: preBalances.map(u64),
        postBalances: postBalances.map(u64),
        innerInstructions: meta
          .innerInstructions()
          .map((list, index) => ({
            index,
            instructions: list.map((inner) => {
              const ix = inner.instruction();
              return { programIdIndex: ix.programIdIndex(), accounts: [...ix.accounts()], data: b58.decode(ix.data()), stackHeight: inner.stackHeight() };
            }),
          }))
          .filter((x) => x.instructions.length > 0),
        logMessages: meta.logs(),
        preTokenBalances,
        postTokenBalances,
        rewards: [],
        loadedAddresses: loaded,
        ...(returnData.data().length > 0 ? { returnData: { programId: addressOf.decode(returnData.programId()), data: [b64.decode(returnData.data()), 'base64'] } } : {}),
        computeUnitsConsumed: Number(meta.computeUnitsConsumed()),
      },
      version: compiled.version === 0 ? 0 : 'legacy',
    };
    pending.push(rendered);
    return { signature, rendered };
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
      getMintToInstruction({ mint: mint.address, token: ata, mintAuthority: buyer, amount: 1_000n * 10n ** BigInt(decimals) }, { programAddress: program }),
    ]);
    return { address: mint.address, program, decimals };
  }

  /** CreateLookupTable + ExtendLookupTable (instruction data as the ALT program's bincode enum), then one slot on so the addresses are usable. */
  async function lookupTable(addresses: Address[]): Promise<Address> {
    const authority = await generateKeyPairSigner();
    const recentSlot = svm.getSlotHashes()[0]!.slot;
    const slotBytes = new Uint8Array(8);
    new DataView(slotBytes.buffer).setBigUint64(0, recentSlot, true);
    const [table, bump] = await getProgramDerivedAddress({ programAddress: LOOKUP_TABLE_PROGRAM, seeds: [getAddressEncoder().encode(authority.address), slotBytes] });
    const create = new Uint8Array(13);
    const view = new DataView(create.buffer);
    view.setUint32(0, 0, true);
    view.setBigUint64(4, recentSlot, true);
    create[12] = bump;
    const extend = new Uint8Array(12 + 32 * addresses.length);
    const ev = new DataView(extend.buffer);
    ev.setUint32(0, 2, true);
    ev.setBigUint64(4, BigInt(addresses.length), true);
    for (const [i, a] of addresses.entries()) extend.set(getAddressEncoder().encode(a), 12 + 32 * i);
    const accounts = [
      { address: table, role: AccountRole.WRITABLE },
      { address: authority.address, role: AccountRole.READONLY_SIGNER, signer: authority },
      { address: buyer.address, role: AccountRole.WRITABLE_SIGNER, signer: buyer },
      { address: SYSTEM_PROGRAM_ADDRESS, role: AccountRole.READONLY },
    ];
    await execute([
      { programAddress: LOOKUP_TABLE_PROGRAM, accounts, data: create },
      { programAddress: LOOKUP_TABLE_PROGRAM, accounts, data: extend },
    ]);
    svm.warpToSlot(svm.getClock().slot + 1n); // extended addresses are usable from the next slot on
    return table;
  }

  /** Agave's UiTokenAccount (jsonParsed) for SPL Token's Account layout. */
  function parsedTokenAccount(data: Uint8Array, program: string) {
    const mint = addressOf.decode(data.subarray(0, 32));
    const amount = readU64(data, 64);
    const mintAccount = svm.getAccount(mint);
    const decimals = mintAccount.exists ? mintAccount.data[44]! : 0;
    const info: Record<string, unknown> = {
      isNative: false,
      mint,
      owner: addressOf.decode(data.subarray(32, 64)),
      state: ['uninitialized', 'initialized', 'frozen'][data[108]!] ?? 'uninitialized',
      tokenAmount: { amount: amount.toString(), decimals, uiAmount: Number(amount) / 10 ** decimals, uiAmountString: uiAmountString(amount, decimals) },
    };
    if (program === TOKEN_2022 && data.length > TOKEN_ACCOUNT_LEN) info.extensions = [{ extension: 'immutableOwner' }];
    return { program: program === TOKEN_2022 ? 'spl-token-2022' : 'spl-token', parsed: { info, type: 'account' }, space: data.length };
  }

  /**
   * The JSON-RPC methods a sweep or refund uses (the shapes of test/helpers/litesvm-sweep-rpc.ts),
   * over this same SVM: what `refund broadcast` sends is executed here, rendered and put in the
   * next sealed slot, where the indexer reads it.
   */
  function sweepMethod(method: string, p: unknown[], chain: ChainView) {
    const context = { slot: chain.slot, apiVersion: '2.2.16' };
    switch (method) {
      case 'getMultipleAccounts': {
        const value = (p[0] as string[]).map((key) => {
          const a = svm.getAccount(address(key));
          if (!a.exists) return null;
          return { data: ['', 'base64'], executable: a.executable, lamports: u64(a.lamports), owner: a.programAddress, rentEpoch: 18446744073709551615n, space: Number(a.space) };
        });
        return { result: { context, value } };
      }
      case 'getTokenAccountsByOwner': {
        const owner = String(p[0]);
        const program = (p[1] as { programId: string }).programId;
        const value = svm
          .getProgramAccounts(address(program))
          .filter((a) => a.data.length >= TOKEN_ACCOUNT_LEN && a.data[108] !== 0 && addressOf.decode(a.data.subarray(32, 64)) === owner && (a.data.length === TOKEN_ACCOUNT_LEN || a.data[TOKEN_ACCOUNT_LEN] === ACCOUNT_TYPE_ACCOUNT))
          .map((a) => ({ pubkey: a.address, account: { data: parsedTokenAccount(new Uint8Array(a.data), program), executable: false, lamports: u64(a.lamports), owner: program, rentEpoch: 18446744073709551615n, space: a.data.length } }));
        return { result: { context, value } };
      }
      case 'getLatestBlockhash':
        return { result: { context, value: { blockhash: svm.latestBlockhash(), lastValidBlockHeight: chain.slot + 150 } } };
      case 'getMinimumBalanceForRentExemption':
        return { result: u64(svm.minimumBalanceForRentExemption(BigInt(Number(p[0])))) };
      case 'getFeeForMessage': {
        const message = getCompiledTransactionMessageDecoder().decode(new Uint8Array(Buffer.from(String(p[0]), 'base64')));
        return { result: { context, value: message.lifetimeToken === svm.latestBlockhash() ? 5000 * message.header.numSignerAccounts : null } };
      }
      case 'isBlockhashValid':
        return { result: { context, value: String(p[0]) === svm.latestBlockhash() } };
      case 'sendTransaction': {
        const tx = getTransactionDecoder().decode(new Uint8Array(Buffer.from(String(p[0]), 'base64')));
        const signature = getSignatureFromTransaction(tx);
        if (sent.has(signature)) return { error: { code: -32002, message: 'Transaction simulation failed: This transaction has already been processed', data: { err: 'AlreadyProcessed', logs: [] } } };
        const simulated = svm.simulateTransaction(tx);
        if (simulated instanceof FailedTransactionMetadata) {
          return { error: { code: -32002, message: `Transaction simulation failed: ${simulated.err().toString()}`, data: { err: simulated.err().toString(), logs: simulated.meta().logs() } } };
        }
        sent.set(signature, run(tx).rendered.meta.err);
        return { result: signature };
      }
      case 'getSignatureStatuses': {
        const value = (p[0] as string[]).map((sig) => {
          if (!sent.has(sig)) return null;
          const err = sent.get(sig) ?? null;
          const at = chain.slotOf(sig);
          const status = err === null ? { Ok: null } : { Err: err };
          if (at === undefined) return { slot: chain.slot + 1, confirmations: 0, err, status, confirmationStatus: 'processed' };
          const final = at <= chain.finalized;
          return { slot: at, confirmations: final ? null : chain.slot - at, err, status, confirmationStatus: final ? 'finalized' : 'confirmed' };
        });
        return { result: { context, value } };
      }
      default:
        return undefined;
    }
  }

  const usdc = await createMint(TOKEN_PROGRAM_ADDRESS, 6);
  const lookAlike = await createMint(TOKEN_PROGRAM_ADDRESS, 6);
  const usdc2022 = await createMint(TOKEN_2022, 6);

  const seal = () => {
    const txs = pending;
    pending = [];
    sim.produce({ executed: txs });
    return txs.map((t) => t.transaction.signatures[0]!);
  };
  seal(); // the mints' setup, in slot 1

  return {
    url: sim.url,
    svm,
    sim,
    buyer,
    usdc,
    lookAlike,
    usdc2022,
    async sendSol(to, amount, options = {}) {
      const transfer = getTransferSolInstruction({ source: options.from ?? buyer, destination: address(to), amount });
      if (!options.viaLookupTable) return execute([transfer]);
      const table = await lookupTable([address(to)]);
      return execute([transfer], { table, addresses: [address(to)] });
    },
    async fund(amount) {
      const holder = await generateKeyPairSigner();
      svm.setAccount({ address: holder.address, lamports: lamports(amount), data: new Uint8Array(), executable: false, programAddress: SYSTEM_PROGRAM_ADDRESS, space: 0n });
      return holder;
    },
    sendSolThenFail(to, amount) {
      const balance = svm.getBalance(buyer.address) ?? 0n;
      return execute([getTransferSolInstruction({ source: buyer, destination: address(to), amount }), getTransferSolInstruction({ source: buyer, destination: address(to), amount: balance * 2n })]);
    },
    async sendToken(mint, owner, amount) {
      const [source] = await findAssociatedTokenPda({ owner: buyer.address, mint: mint.address, tokenProgram: mint.program });
      const [ata] = await findAssociatedTokenPda({ owner: address(owner), mint: mint.address, tokenProgram: mint.program });
      return execute([
        getCreateAssociatedTokenIdempotentInstruction({ payer: buyer, owner: address(owner), mint: mint.address, ata, tokenProgram: mint.program }),
        getTransferCheckedInstruction({ source, mint: mint.address, destination: ata, authority: buyer, amount, decimals: mint.decimals }, { programAddress: mint.program }),
      ]);
    },
    seal,
    mine(count) {
      for (let i = 0; i < count; i++) sim.produce();
    },
    close: () => sim.close(),
  };
}
