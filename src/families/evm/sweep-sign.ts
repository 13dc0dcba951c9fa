import { createHash } from 'node:crypto';
import { getAddress, HDNodeWallet, keccak256, Transaction, TypedDataEncoder, Wallet, type TransactionLike } from 'ethers';
import { UsageError } from '../../domain/errors.ts';
import type { FamilySweepSigner, SignedSweepTx, SweepCandidate, SweepKey, SweepPlan, UnsignedSweepTx } from '../sweep.ts';
import { checkPlanNetwork, expectedChainIds } from '../../chains/sweep-networks.ts';
import {
  EvmSweepPayloadSchema,
  feeFields,
  plainCall,
  SWEEPER_ABI,
  SWEEPER_ADDRESS,
  SWEEPER_INIT_CODE_HASH,
  sweepTypedData,
  type EvmBatchPayload,
  type EvmSweepPayload,
} from './sweep-payload.ts';
import { checkRefund } from './sweep-refund-check.ts';

// The offline half of an EVM sweep: keys from the wallet seed (BIP39 seed → BIP44 m/44'/60'/N'),
// then one signature per transaction of the plan. Pure: no network, no clock but the deadline
// check, no file. It trusts nothing in the plan it can check itself: the chain id, the Sweeper's
// address and code, the destination of every move (always plan.to), who pays (deposits or the
// plan's fee payer), and that a gas top-up goes to one of the plan's own deposits; for a refund,
// also the amount (sweep-refund-check.ts).

/** Accounts m/44'/60'/N' tried when matching a pool's key fingerprint. */
const ACCOUNT_SEARCH = 100;
/** Accounts searched for deposits from an address list (no fingerprint to match). */
const FILE_ACCOUNT_SEARCH = 5;
/** Change addresses …/1/i of the deposits' account tried for the fee payer. */
const FEE_PAYER_CHANGE_SEARCH = 20;

/** The same id as keyFingerprint() in src/families/derive.ts, from a node instead of an xpub string. */
export function accountFingerprint(node: HDNodeWallet): string {
  return createHash('sha256')
    .update(Buffer.from(node.publicKey.slice(2), 'hex'))
    .update(Buffer.from(node.chainCode.slice(2), 'hex'))
    .digest('hex')
    .slice(0, 16);
}

// Derivation is the slow part (a few ms per hardened step): remember accounts per seed for the
// life of the one `sweep sign` process. Keyed weakly on the seed so nothing outlives it.
const accountsBySeed = new WeakMap<Uint8Array, Map<number, HDNodeWallet>>();

function account(seed: Uint8Array, n: number): HDNodeWallet {
  let accounts = accountsBySeed.get(seed);
  if (!accounts) {
    accounts = new Map();
    accountsBySeed.set(seed, accounts);
  }
  let node = accounts.get(n);
  if (!node) {
    node = HDNodeWallet.fromSeed(seed).derivePath(`m/44'/60'/${n}'`);
    accounts.set(n, node);
  }
  return node;
}

/** The account m/44'/60'/N' whose public key has this fingerprint, or throws. */
function accountBySource(seed: Uint8Array, source: string): HDNodeWallet {
  for (let n = 0; n < ACCOUNT_SEARCH; n++) {
    const node = account(seed, n);
    if (accountFingerprint(node) === source) return node;
  }
  throw new UsageError(`no account m/44'/60'/N' (N < ${ACCOUNT_SEARCH}) of this seed has key fingerprint ${source}: the pool was seeded from another wallet`);
}

function sweepKey(node: HDNodeWallet): SweepKey {
  return { address: node.address, privateKey: Buffer.from(node.privateKey.slice(2), 'hex') };
}

function deriveKey(seed: Uint8Array, candidate: SweepCandidate, plan: SweepPlan, searchLimit: number): SweepKey {
  const wanted = getAddress(candidate.address);
  // A caller may ask for the fee payer's key as if it were a deposit of unknown index.
  if (candidate.derivationIndex === null && plan.feePayer !== null && getAddress(plan.feePayer) === wanted) return deriveFeePayerKey(seed, plan, searchLimit);
  if (candidate.derivationIndex === null && candidate.source === 'wallet') return walletKey(seed, wanted, searchLimit);
  if (candidate.derivationIndex !== null && candidate.source !== 'file') {
    const node = accountBySource(seed, candidate.source).deriveChild(0).deriveChild(candidate.derivationIndex);
    if (node.address !== wanted) {
      throw new UsageError(`deposit ${candidate.derivationIndex} derives another address than the plan names: the plan does not belong to this seed`);
    }
    return sweepKey(node);
  }
  for (let n = 0; n < FILE_ACCOUNT_SEARCH; n++) {
    const receive = account(seed, n).deriveChild(0);
    for (let i = 0; i < searchLimit; i++) {
      const node = receive.deriveChild(i);
      if (node.address === wanted) return sweepKey(node);
    }
  }
  throw new UsageError(`a deposit of the plan is none of the first ${searchLimit} receive addresses of accounts m/44'/60'/0' to ${FILE_ACCOUNT_SEARCH - 1}' of this seed`);
}

/** A merchant wallet address (a refund paid after the deposit was swept): the standard account m/44'/60'/0'/0/i, as MetaMask derives it. */
function walletKey(seed: Uint8Array, wanted: string, searchLimit: number): SweepKey {
  const receive = account(seed, 0).deriveChild(0);
  for (let i = 0; i < searchLimit; i++) {
    const node = receive.deriveChild(i);
    if (node.address === wanted) return sweepKey(node);
  }
  throw new UsageError(`the wallet address ${wanted} is none of this seed's m/44'/60'/0'/0/i for i < ${searchLimit}`);
}

/**
 * The fee payer is an address of the same seed: a change address …/1/i (i < 20) of the deposits'
 * account (of accounts 0–4 for a refund from a merchant wallet), or a standard wallet account
 * m/44'/60'/0'/0/i (MetaMask's first accounts, i < searchLimit).
 */
function deriveFeePayerKey(seed: Uint8Array, plan: SweepPlan, searchLimit: number): SweepKey {
  if (plan.feePayer === null) throw new UsageError('the plan has no fee payer');
  const wanted = getAddress(plan.feePayer);
  const sources = [...new Set(plan.deposits.map((d) => d.source).filter((s) => s !== 'file' && s !== 'wallet'))];
  // A refund from a merchant wallet names no pool account: the fee payer may be any account's change address.
  const fromWallet = sources.length === 0 && plan.deposits.some((d) => d.source === 'wallet');
  const accounts = fromWallet ? Array.from({ length: FILE_ACCOUNT_SEARCH }, (_, n) => account(seed, n)) : sources.map((source) => accountBySource(seed, source));
  for (const node of accounts) {
    const change = node.deriveChild(1);
    for (let i = 0; i < FEE_PAYER_CHANGE_SEARCH; i++) {
      const node = change.deriveChild(i);
      if (node.address === wanted) return sweepKey(node);
    }
  }
  const standard = account(seed, 0).deriveChild(0);
  for (let i = 0; i < searchLimit; i++) {
    const node = standard.deriveChild(i);
    if (node.address === wanted) return sweepKey(node);
  }
  throw new UsageError(
    `the plan's fee payer is not an address of this seed (looked at ${fromWallet ? `m/44'/60'/N'/1/i for N < ${FILE_ACCOUNT_SEARCH}` : "the deposits' account …/1/i"} for i < ${FEE_PAYER_CHANGE_SEARCH} and m/44'/60'/0'/0/i for i < ${searchLimit})`,
  );
}

/** From an account-level xprv (m/44'/60'/N') instead of the seed: the deposits at 0/i, the fee payer at 1/i or 0/i. */
function deriveKeyFromAccount(accountKey: string, candidate: SweepCandidate, plan: SweepPlan, searchLimit: number): SweepKey {
  const node = HDNodeWallet.fromExtendedKey(accountKey);
  if (!(node instanceof HDNodeWallet)) throw new UsageError('an account public key cannot sign: give the xprv of the account, or the seed');
  if (node.depth !== 3) throw new UsageError(`the extended key is at depth ${node.depth}; give the account's (m/44'/60'/N', depth 3)`);
  const wanted = getAddress(candidate.address);
  const isFeePayer = plan.feePayer !== null && getAddress(plan.feePayer) === wanted && candidate.derivationIndex === null;
  if (!isFeePayer && candidate.source !== 'file' && candidate.source !== 'wallet' && accountFingerprint(node) !== candidate.source) {
    throw new UsageError(`this account key's fingerprint is not the pool's (${candidate.source}): the pool was seeded from another account`);
  }
  if (candidate.derivationIndex !== null && !isFeePayer) {
    const child = node.deriveChild(0).deriveChild(candidate.derivationIndex);
    if (child.address !== wanted) throw new UsageError(`deposit ${candidate.derivationIndex} derives another address than the plan names`);
    return sweepKey(child);
  }
  for (const branch of isFeePayer ? [1, 0] : [0]) {
    const chain = node.deriveChild(branch);
    for (let i = 0; i < searchLimit; i++) {
      const child = chain.deriveChild(i);
      if (child.address === wanted) return sweepKey(child);
    }
  }
  throw new UsageError(`${isFeePayer ? "the plan's fee payer" : 'a deposit of the plan'} is none of the first ${searchLimit} addresses of this account key`);
}

function sign(plan: SweepPlan, keys: ReadonlyMap<string, SweepKey>): SignedSweepTx[] {
  if (plan.family !== 'evm') throw new UsageError(`the plan is for the ${plan.family} family, not EVM`);
  const to = getAddress(plan.to);
  const feePayer = plan.feePayer === null ? null : getAddress(plan.feePayer);
  const deposits = new Map(plan.deposits.map((d) => [getAddress(d.address), d]));
  const payloads = new Map<string, EvmSweepPayload>();
  for (const tx of plan.transactions) {
    const parsed = EvmSweepPayloadSchema.safeParse(tx.payload);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new UsageError(`${tx.id}: not an EVM sweep transaction (${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'bad shape'})`);
    }
    payloads.set(tx.id, parsed.data);
  }
  if (plan.kind === 'refund' || plan.refund !== undefined) checkRefund(plan, payloads);

  // The chain ids come from the signer's own registry: a plan's network label never turns this off,
  // and DEVNET accepts only the local chains' ids (DEVNET_CHAIN_IDS), all transactions the same.
  checkPlanNetwork(plan);
  const chainIds = expectedChainIds(plan.chain, plan.network, plan.testnet);
  if (chainIds === null) throw new UsageError(`the registry names no chain id for ${plan.chain} ${plan.network}`);
  let chainId: number | null = null;
  for (const [id, payload] of payloads) {
    chainId ??= payload.chainId;
    if (!chainIds.includes(String(payload.chainId)) || payload.chainId !== chainId) {
      throw new UsageError(`${id}: chain id ${payload.chainId}, but the plan is for ${plan.chain} ${plan.network} (${chainIds.join(' or ')})`);
    }
  }

  const wallet = (address: string, id: string): Wallet => {
    const key = keys.get(address) ?? keys.get(address.toLowerCase()) ?? [...keys.values()].find((k) => getAddress(k.address) === address);
    if (!key) throw new UsageError(`${id}: no key for its signer`);
    const w = new Wallet(`0x${Buffer.from(key.privateKey).toString('hex')}`);
    if (w.address !== address) throw new UsageError(`${id}: the key given for its signer derives another address`);
    return w;
  };
  const requireDeposit = (address: string, id: string) => {
    const deposit = deposits.get(getAddress(address));
    if (!deposit) throw new UsageError(`${id}: its account is not one of the plan's deposits`);
    return deposit;
  };
  const requireFeePayer = (address: string, id: string) => {
    if (feePayer === null || getAddress(address) !== feePayer) throw new UsageError(`${id}: paid by an account that is not the plan's fee payer`);
  };

  return plan.transactions.map((tx) => {
    const payload = payloads.get(tx.id) as EvmSweepPayload;
    const from = getAddress(payload.from);
    const base: TransactionLike = { type: 2, ...feeFields(payload), value: 0n };
    let request: TransactionLike;
    switch (payload.kind) {
      case 'native':
      case 'token':
        requireDeposit(from, tx.id);
        request = { ...base, ...plainCall(payload, to) };
        break;
      case 'top-up': {
        requireFeePayer(from, tx.id);
        const target = getAddress(payload.to);
        requireDeposit(target, tx.id);
        // A top-up pays exactly the gas reserve of the transfers it precedes, never more.
        const reserve = plan.transactions
          .filter((other) => other.after.includes(tx.id))
          .map((other) => payloads.get(other.id) as EvmSweepPayload)
          .filter((p) => getAddress(p.from) === target)
          .reduce((sum, p) => sum + BigInt(p.gasLimit) * BigInt(p.maxFeePerGas), 0n);
        if (BigInt(payload.value) > reserve) throw new UsageError(`${tx.id}: a gas top-up of more than the transfers after it can spend`);
        request = { ...base, ...plainCall(payload, to) };
        break;
      }
      case 'deploy-sweeper':
        requireFeePayer(from, tx.id);
        if (keccak256(payload.initCode) !== SWEEPER_INIT_CODE_HASH) throw new UsageError(`${tx.id}: deploys other code than chaingate's Sweeper`);
        request = { ...base, ...plainCall(payload, to) };
        break;
      case '7702-batch': {
        requireFeePayer(from, tx.id);
        const call = batchCall(payload, to, tx.id, (address) => wallet(address, tx.id), requireDeposit);
        // A type-4 transaction must carry an authorization; when every deposit is already delegated, a plain call does.
        request = { ...base, ...call, type: call.authorizationList?.length ? 4 : 2, authorizationList: call.authorizationList?.length ? call.authorizationList : null };
        break;
      }
    }
    checkSigners(tx, from);
    const signed = Transaction.from(request);
    signed.signature = wallet(from, tx.id).signingKey.sign(signed.unsignedHash);
    return { id: tx.id, raw: signed.serialized, txid: signed.hash as string };
  });
}

/** The signers a transaction names must be exactly its sender (and, for a batch, the deposits it sweeps, checked by key lookup). */
function checkSigners(tx: UnsignedSweepTx, from: string): void {
  if (!tx.signers.some((s) => getAddress(s) === from)) throw new UsageError(`${tx.id}: its sender is not among its signers`);
}

function batchCall(
  payload: EvmBatchPayload,
  to: string,
  id: string,
  wallet: (address: string) => Wallet,
  requireDeposit: (address: string, id: string) => unknown,
): Pick<TransactionLike, 'to' | 'data' | 'authorizationList'> {
  if (getAddress(payload.sweeper) !== SWEEPER_ADDRESS) throw new UsageError(`${id}: delegates deposits to another contract than chaingate's Sweeper`);
  if (payload.deadline * 1000 <= Date.now()) throw new UsageError(`${id}: the plan's deadline has passed; make a new plan`);
  const chainId = BigInt(payload.chainId);
  const authorizationList = [];
  const orders = [];
  for (const order of payload.orders) {
    const deposit = getAddress(order.deposit);
    requireDeposit(deposit, id);
    const w = wallet(deposit);
    if (order.authNonce !== null) authorizationList.push(w.authorizeSync({ address: SWEEPER_ADDRESS, nonce: order.authNonce, chainId }));
    const tokens = order.tokens.map((t) => getAddress(t));
    const typed = sweepTypedData(chainId, deposit, to, tokens, BigInt(payload.deadline));
    const signature = w.signingKey.sign(TypedDataEncoder.hash(typed.domain, typed.types, typed.value));
    orders.push({ deposit, to, tokens, deadline: BigInt(payload.deadline), v: signature.v, r: signature.r, s: signature.s });
  }
  return { to: SWEEPER_ADDRESS, data: SWEEPER_ABI.encodeFunctionData('sweepMany', [orders]), authorizationList };
}

export const evmSweepSigner: FamilySweepSigner = { deriveKey, deriveFeePayerKey, deriveKeyFromAccount, sign };
