import { address, createNoopSigner, type Instruction } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { getCreateAssociatedTokenIdempotentInstruction, getTransferCheckedInstruction } from '@solana-program/token';
import type { ResolvedNetwork } from '../../chains/registry.ts';
import type { Holding, PlannedDeposit, SweepPlan } from '../sweep.ts';
import { UsageError } from '../../domain/errors.ts';
import { refundCandidate, type RefundInput } from '../sweep-refund.ts';
import { solanaAddresses } from './address.ts';
import { solanaRpc } from './sweep-rpc.ts';
import { short, type SolanaSweepPayload } from './sweep-sign.ts';
import { associatedTokenAddress, readSweepMessage, TOKEN_PROGRAMS } from './sweep-message.ts';
import { accounts, checkClusterFee, compileLegacy, hold, isWallet, latestLifetime, rentFor, tokenAccountsOf, type TokenAccount } from './sweep-accounts.ts';
import { messageFee, rentExemptMinimum, tokenAccountSpace } from './sweep-fee.ts';

// A Solana refund (RefundAsk in ../sweep.ts): one legacy transaction from one address that moves
// exactly the refund to the buyer, a System transfer of SOL or a transferChecked into the buyer's
// associated token account (created idempotently), and nothing else. No token account is closed:
// the remainder, other tokens and the accounts' rent stay for the next sweep. The fee payer pays
// the fee and the buyer's token account where the plan names one; else the address does, and
// Solana's rent rule (a System account ends at 0 or at least the rent-exempt minimum) decides
// whether the fee can come out of what stays or must come out of the refund. The buyer's token
// account is created only when it does not exist yet, and its rent counts as fee (sweep-fee.ts):
// the planned deposit's `fee` is what the transaction costs, whoever pays it.

/** Agave's rent-state rule for an account going from `pre` to `post` lamports (same data size). */
const rentAllows = (pre: bigint, post: bigint, minimum: bigint) => post === 0n || post >= minimum || (pre < minimum && post <= pre);

const NOT_REFUNDED = 'not refunded: it stays on the address for the next sweep';
const RENT_STAYS = 'not refunded: rent of its token account, which stays open';

/** What the address holds, per coin, with its SOL the wallet's lamports plus its token accounts' rent. */
function holdingsOf(network: ResolvedNetwork, lamports: bigint, tokenAccounts: TokenAccount[]): Holding[] {
  const sol = network.native;
  const out = new Map<string | null, Holding>();
  const add = (h: Holding) => {
    const prev = out.get(h.token);
    out.set(h.token, prev ? { ...prev, amount: (BigInt(prev.amount) + BigInt(h.amount)).toString() } : h);
  };
  for (const ta of tokenAccounts) {
    const info = ta.account.data.parsed.info;
    const known = network.tokens.find((t) => t.address === info.mint);
    add(hold(known?.symbol ?? 'unknown', info.mint, info.tokenAmount.decimals, BigInt(info.tokenAmount.amount)));
    add(hold(sol.symbol, null, sol.decimals, ta.account.lamports));
  }
  if (lamports > 0n) add(hold(sol.symbol, null, sol.decimals, lamports));
  return [...out.values()].filter((h) => BigInt(h.amount) > 0n);
}

/** What stays of every token account: tokens (but `except`'s, told apart by the caller) and rent. */
function tokensLeft(network: ResolvedNetwork, tokenAccounts: TokenAccount[], except: string | null): PlannedDeposit['leftBehind'] {
  const sol = network.native;
  return tokenAccounts.flatMap((ta) => {
    const info = ta.account.data.parsed.info;
    const amount = BigInt(info.tokenAmount.amount);
    const symbol = network.tokens.find((t) => t.address === info.mint)?.symbol ?? 'unknown';
    const rent = { holding: hold(sol.symbol, null, sol.decimals, ta.account.lamports), reason: RENT_STAYS };
    return info.mint === except || amount === 0n ? [rent] : [{ holding: hold(symbol, info.mint, info.tokenAmount.decimals, amount), reason: NOT_REFUNDED }, rent];
  });
}

interface Built {
  instructions: Instruction[];
  /** Lamports the buyer receives (native) or 0n. */
  lamportsOut: bigint;
}

export async function planSolanaRefund({ network, config, log, candidates, to: toInput, feePayer: feePayerInput, refund }: RefundInput): Promise<Pick<SweepPlan, 'deposits' | 'skipped' | 'transactions'>> {
  const to = solanaAddresses.validate(toInput.trim(), network.testnet, {});
  const feePayer = feePayerInput === null ? null : solanaAddresses.validate(feePayerInput.trim(), network.testnet, {});
  const candidate = refundCandidate(candidates, refund);
  const owner = candidate.address;
  if (owner === to) throw new UsageError('the buyer\'s address is the address the refund is made from');
  if (feePayer === owner) throw new UsageError('the fee payer is the address the refund is made from: leave --fee-payer out and that address pays its own fee');
  if (feePayer === to) throw new UsageError('the fee payer is the buyer\'s address: name a wallet of yours');
  const sol = network.native;
  const { call } = solanaRpc(network, config, log);

  const read = await accounts(call, feePayer ? [to, owner, feePayer] : [to, owner]);
  const [buyer, own, payerAccount] = [read[0] ?? null, read[1] ?? null, read[2] ?? null];
  if (buyer && TOKEN_PROGRAMS.includes(buyer.owner)) throw new UsageError('the buyer\'s address is a token account: give the buyer\'s wallet (owner) address; its token account is found from it');
  if (buyer?.executable) throw new UsageError('the buyer\'s address is a program, not a wallet');
  if (feePayer && (!payerAccount || !isWallet(payerAccount))) throw new UsageError(`the fee payer ${short(feePayer)} ${payerAccount ? 'is not a plain wallet (System-owned, no data)' : 'holds no SOL'}: fund it first`);
  const tokenAccounts = await tokenAccountsOf(call, owner);
  const [walletRent, lifetime] = await Promise.all([rentFor(call, 0), latestLifetime(call)]);
  const lamports = own?.lamports ?? 0n;
  const wallet = own !== null && isWallet(own);
  const payer = feePayer ?? owner;
  const holdings = holdingsOf(network, lamports, tokenAccounts);
  const compile = (instructions: Instruction[]) => compileLegacy(payer, lifetime, instructions);
  const authority = createNoopSigner(address(owner));
  const what = `${refund.symbol} (atomic)`;
  const transfer = (amount: bigint): Built => ({ instructions: [getTransferSolInstruction({ source: authority, destination: address(to), amount })], lamportsOut: amount });

  let built: Built;
  let ataCost = 0n;
  if (refund.token === null) {
    if (!wallet && lamports > 0n) throw new UsageError(`${short(owner)} is not a plain wallet (owned by a program or holding data): the System program does not transfer from it`);
    if (lamports < refund.amount) throw new UsageError(`${short(owner)} holds ${lamports} ${what}, less than the refund of ${refund.amount}`);
    built = transfer(refund.amount);
  } else {
    const mint = refund.token;
    const mine = tokenAccounts.filter((ta) => {
      const info = ta.account.data.parsed.info;
      return ta.account.data.parsed.type === 'account' && info.mint === mint && info.owner === owner && info.state === 'initialized' && !info.isNative;
    });
    const decimals = mine[0]?.account.data.parsed.info.tokenAmount.decimals;
    if (decimals !== undefined && decimals !== refund.decimals) throw new UsageError(`mint ${short(mint)} has ${decimals} decimals, the refund says ${refund.decimals}`);
    const balance = (ta: TokenAccount) => BigInt(ta.account.data.parsed.info.tokenAmount.amount);
    const total = mine.reduce((s, ta) => s + balance(ta), 0n);
    if (total < refund.amount) throw new UsageError(`${short(owner)} holds ${total} ${what}, less than the refund of ${refund.amount}`);
    // Largest first, so one token account (the usual case) pays the whole refund.
    const sources = [...mine].sort((a, b) => (balance(b) > balance(a) ? 1 : balance(b) < balance(a) ? -1 : 0));
    const program = sources[0]!.account.owner;
    const ata = associatedTokenAddress(to, mint, program);
    const [ataAccount] = await accounts(call, [ata]);
    const instructions: Instruction[] = [];
    if (!ataAccount) {
      const space = tokenAccountSpace(program);
      ataCost = await rentFor(call, space);
      if (ataCost !== rentExemptMinimum(space)) throw new UsageError(`the cluster's rent for a ${space}-byte token account is ${ataCost} lamports, not the ${rentExemptMinimum(space)} the signer reckons with`);
      instructions.push(getCreateAssociatedTokenIdempotentInstruction({ payer: createNoopSigner(address(payer)), ata: address(ata), owner: address(to), mint: address(mint), tokenProgram: address(program) }));
    }
    let rest = refund.amount;
    for (const ta of sources) {
      const have = balance(ta);
      // biome-ignore lint/complexity/useMathMinMax: bigints, which Math.min does not take
      const take = have > rest ? rest : have;
      if (take === 0n) break;
      instructions.push(getTransferCheckedInstruction({ source: address(ta.pubkey), mint: address(mint), destination: address(ata), authority, amount: take, decimals: refund.decimals }, { programAddress: address(ta.account.owner) }));
      rest -= take;
    }
    built = { instructions, lamportsOut: 0n };
  }

  const first = compile(built.instructions).bytes;
  const { network: fee, total } = messageFee(readSweepMessage(first, 'the refund'));
  await checkClusterFee(call, Buffer.from(first).toString('base64'), fee);
  let paid = 0n; // what the address itself pays: the fee, and the buyer's token account without a fee payer
  if (feePayer) {
    const needed = fee + ataCost + walletRent;
    if (payerAccount!.lamports < needed) throw new UsageError(`the fee payer holds ${payerAccount!.lamports} lamports; this refund needs ${needed} (fee ${fee}${ataCost ? `, the buyer's token account ${ataCost}` : ''}, and ${walletRent} it must keep): fund it first`);
    if (!rentAllows(lamports, lamports - built.lamportsOut, walletRent)) throw leavesDust(owner, lamports, refund.amount, walletRent);
  } else {
    paid = fee + ataCost;
    const canPay = wallet && lamports >= paid && rentAllows(lamports, lamports - fee, walletRent);
    if (refund.token !== null) {
      if (!canPay || !rentAllows(lamports, lamports - paid, walletRent)) {
        throw new UsageError(`${short(owner)} holds ${lamports} lamports, too little to pay the refund's fee of ${paid} (${fee} for the transaction${ataCost ? `, ${ataCost} for the buyer's token account` : ''}) and keep 0 or ${walletRent}: pass --fee-payer <a wallet of yours>`);
      }
    } else if (canPay && lamports - refund.amount >= fee && rentAllows(lamports, lamports - refund.amount - fee, walletRent)) {
      // The fee comes out of what stays: the buyer receives the whole refund.
    } else if (canPay && refund.amount > fee && rentAllows(lamports, lamports - refund.amount, walletRent)) {
      built = transfer(refund.amount - fee); // same signers, so the same fee
    } else if (!canPay) {
      throw new UsageError(`${short(owner)} holds ${lamports} lamports: it cannot pay the refund's fee of ${fee} itself and keep 0 or at least ${walletRent} (Solana's rent rule): pass --fee-payer <a wallet of yours>`);
    } else {
      throw leavesDust(owner, lamports, refund.amount, walletRent, fee);
    }
  }
  if (built.lamportsOut > 0n && (buyer === null || isWallet(buyer)) && (buyer?.lamports ?? 0n) + built.lamportsOut < walletRent) {
    throw new UsageError(`the buyer's wallet would hold ${(buyer?.lamports ?? 0n) + built.lamportsOut} lamports, below the ${walletRent} Solana requires of a wallet: refund at least ${walletRent - (buyer?.lamports ?? 0n)} lamports`);
  }

  const { bytes } = compile(built.instructions);
  const base64 = Buffer.from(bytes).toString('base64');
  const moves = refund.token === null ? [hold(sol.symbol, null, sol.decimals, built.lamportsOut)] : [hold(refund.symbol, refund.token, refund.decimals, refund.amount)];
  const solStays = lamports - built.lamportsOut - paid;
  const tokenStays = refund.token === null ? 0n : tokenAccounts.filter((ta) => ta.account.data.parsed.info.mint === refund.token).reduce((s, ta) => s + BigInt(ta.account.data.parsed.info.tokenAmount.amount), 0n) - refund.amount;
  const leftBehind: PlannedDeposit['leftBehind'] = [
    ...(refund.token !== null && tokenStays > 0n ? [{ holding: hold(refund.symbol, refund.token, refund.decimals, tokenStays), reason: `not refunded: the rest of the ${refund.symbol} stays on the address` }] : []),
    ...tokensLeft(network, tokenAccounts, refund.token),
    ...(solStays > 0n ? [{ holding: hold(sol.symbol, null, sol.decimals, solStays), reason: NOT_REFUNDED }] : []),
  ];
  const payload: SolanaSweepPayload = { message: base64, blockhash: lifetime.blockhash, lastValidBlockHeight: lifetime.lastValidBlockHeight.toString(), fee: fee.toString() };
  log.info({ chain: network.chain, symbol: refund.symbol, fee: fee.toString(), feePayer: feePayer !== null }, 'solana refund planned');
  return {
    deposits: [{ ...candidate, holdings, moves, fee: total.toString(), leftBehind }],
    skipped: [],
    transactions: [{ id: 'tx-0', signers: feePayer ? [feePayer, owner] : [owner], deposits: [owner], after: [], payload }],
  };
}

/** A refund that would leave the address between 0 and the rent-exempt minimum, which the runtime refuses. */
function leavesDust(owner: string, lamports: bigint, amount: bigint, walletRent: bigint, fee = 0n): UsageError {
  const most = lamports - walletRent - fee;
  return new UsageError(
    `${short(owner)} holds ${lamports} lamports: a refund of ${amount}${fee ? ` and its fee of ${fee}` : ''} would leave it between 0 and ${walletRent}, which Solana refuses (the rent-exempt minimum): refund all ${lamports}${most > 0n ? `, or at most ${most}` : ''}`,
  );
}
