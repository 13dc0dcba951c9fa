import { address, createNoopSigner, type Instruction } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { getCloseAccountInstruction, getCreateAssociatedTokenIdempotentInstruction, getTransferCheckedInstruction } from '@solana-program/token';
import type { TokenRef } from '../../chains/registry.ts';
import type { FamilySweepPlanner, Holding, PlannedDeposit, SweepPlan, UnsignedSweepTx } from '../sweep.ts';
import { UsageError } from '../../domain/errors.ts';
import { solanaAddresses } from './address.ts';
import { solanaRpc } from './sweep-rpc.ts';
import { short, type SolanaSweepPayload } from './sweep-sign.ts';
import { associatedTokenAddress, MAX_TRANSACTION_BYTES, readSweepMessage, TOKEN_PROGRAMS } from './sweep-message.ts';
import { accounts, checkClusterFee, compileLegacy, hold, isWallet, latestLifetime, rentFor, tokenAccountsOf } from './sweep-accounts.ts';
import { LAMPORTS_PER_SIGNATURE, messageFee, rentExemptMinimum, tokenAccountSpace } from './sweep-fee.ts';
import { planSolanaRefund } from './sweep-refund.ts';
import { mapLimit } from '../map-limit.ts';

// The server half of a Solana sweep: live balances (getMultipleAccounts, getTokenAccountsByOwner
// with jsonParsed), a recent blockhash, and unsigned legacy transactions. One fee payer pays every
// fee and creates the cold wallet's associated token accounts; each deposit sends all its lamports
// (a system account without data may go to 0), transferChecked's every registry token to the cold
// wallet's associated token account and closes its own token accounts, their rent going to the
// cold wallet too: everything a deposit held ends up in cold storage. Deposits are packed into as
// few transactions as fit Agave's 1,232-byte limit. A refund (input `refund`) is sweep-refund.ts.
// Each deposit's `fee` is its share of what its transaction can cost (sweep-fee.ts), though the
// fee payer pays it: its own signature, and for the first deposit of a transaction also the fee
// payer's signature and the cold token accounts the transaction creates.

const CONCURRENCY = 4;

interface DepositWork {
  planned: PlannedDeposit;
  instructions: Instruction[];
  /** Cold token accounts this deposit's transfers need: "mint program". */
  coldAtas: Set<string>;
  /** Lamports arriving at the cold wallet (transfer and closed accounts' rent). */
  solIn: bigint;
  /** Token accounts it closes and the lamports each holds (the payload's `closes`). */
  closes: Record<string, string>;
}

export const solanaSweepPlanner: FamilySweepPlanner = {
  async plan({ network, config, log, candidates, to: toInput, feePayer: feePayerInput, min, refund }) {
    if (refund) return planSolanaRefund({ network, config, log, candidates, to: toInput, feePayer: feePayerInput, refund });
    const to = solanaAddresses.validate(toInput.trim(), network.testnet, {});
    if (feePayerInput === null) throw new UsageError('a Solana sweep needs --fee-payer <address>: one wallet of yours pays every fee (5,000 lamports a signature) and the cold wallet\'s token accounts, so deposits need no SOL');
    const feePayer = solanaAddresses.validate(feePayerInput.trim(), network.testnet, {});
    if (candidates.some((c) => c.address === to)) throw new UsageError('the destination is one of the pool\'s deposit addresses: sweep to a cold wallet outside the pool');
    if (candidates.some((c) => c.address === feePayer)) throw new UsageError('the fee payer is one of the pool\'s deposit addresses: use a wallet outside the pool');
    const native = network.native;
    const sol = native.symbol;
    const tokens = new Map<string, TokenRef>(network.tokens.flatMap((t) => (t.address ? [[t.address, t]] : [])));
    const { call } = solanaRpc(network, config, log);

    const [coldAccount, payerAccount, ...depositAccounts] = await accounts(call, [to, feePayer, ...candidates.map((c) => c.address)]);
    if (coldAccount && TOKEN_PROGRAMS.includes(coldAccount.owner)) throw new UsageError('the destination is a token account: give the cold wallet\'s own (owner) address; its token accounts are found from it');
    if (coldAccount?.executable) throw new UsageError('the destination is a program, not a wallet');
    if (!payerAccount || !isWallet(payerAccount)) throw new UsageError(`the fee payer ${short(feePayer)} ${payerAccount ? 'is not a plain wallet (System-owned, no data)' : 'holds no SOL'}: fund it first`);
    const tokenAccounts = await mapLimit(candidates, CONCURRENCY, (c) => tokenAccountsOf(call, c.address));
    const minFor = (symbol: string) => min[symbol] ?? 0n;

    const work: DepositWork[] = [];
    const skipped: SweepPlan['skipped'] = [];
    candidates.forEach((candidate, i) => {
      const owner = candidate.address;
      const own = depositAccounts[i] ?? null;
      const holdings = new Map<string | null, Holding>();
      const moves = new Map<string | null, Holding>();
      const leftBehind: PlannedDeposit['leftBehind'] = [];
      const instructions: Instruction[] = [];
      const coldAtas = new Set<string>();
      const closes: Record<string, string> = {};
      let solIn = 0n;
      // Per coin or mint, summed: a deposit's SOL is its own lamports plus its token accounts' rent.
      const sum = (into: Map<string | null, Holding>, h: Holding) => {
        const prev = into.get(h.token);
        into.set(h.token, prev ? { ...prev, amount: (BigInt(prev.amount) + BigInt(h.amount)).toString() } : h);
      };
      const add = (h: Holding) => sum(moves, h);
      const signer = createNoopSigner(address(owner));

      for (const ta of tokenAccounts[i] ?? []) {
        const info = ta.account.data.parsed.info;
        const rent = ta.account.lamports;
        const amount = BigInt(info.tokenAmount.amount);
        const known = tokens.get(info.mint);
        const holding = hold(known?.symbol ?? 'unknown', info.mint, info.tokenAmount.decimals, amount);
        const rentHolding = hold(sol, null, native.decimals, rent);
        sum(holdings, holding);
        sum(holdings, rentHolding);
        const leave = (reason: string) => {
          if (amount > 0n) leftBehind.push({ holding, reason });
          leftBehind.push({ holding: rentHolding, reason: 'rent of its token account, which stays open' });
        };
        if (ta.account.data.parsed.type !== 'account' || info.owner !== owner) leave('not a token account this deposit owns');
        else if (!known) leave(`mint ${short(info.mint)} is not a token of solana ${network.network} in the chain registry`);
        else if (known.decimals !== info.tokenAmount.decimals) leave(`the mint has ${info.tokenAmount.decimals} decimals, the registry says ${known.decimals}`);
        else if (info.isNative) leave('wrapped SOL is not swept');
        else if (info.state !== 'initialized') leave(`the token account is ${info.state}`);
        else if (info.closeAuthority !== undefined && info.closeAuthority !== owner) leave('another account holds its close authority');
        else if (amount > 0n && amount < minFor(known.symbol)) leave(`below --min ${minFor(known.symbol)} ${known.symbol}`);
        else {
          const program = address(ta.account.owner);
          const destination = address(associatedTokenAddress(to, info.mint, program));
          if (amount > 0n) {
            instructions.push(getTransferCheckedInstruction({ source: address(ta.pubkey), mint: address(info.mint), destination, authority: signer, amount, decimals: known.decimals }, { programAddress: program }));
            coldAtas.add(`${info.mint} ${program}`);
            add(holding);
          }
          instructions.push(getCloseAccountInstruction({ account: address(ta.pubkey), destination: address(to), owner: signer }, { programAddress: program }));
          closes[ta.pubkey] = rent.toString();
          add(rentHolding);
          solIn += rent;
        }
      }

      const lamports = own?.lamports ?? 0n;
      if (lamports > 0n) {
        const holding = hold(sol, null, native.decimals, lamports);
        sum(holdings, holding);
        if (!own || !isWallet(own)) leftBehind.push({ holding, reason: 'not a plain wallet (owned by a program or holding data): the System program does not transfer from it' });
        else if (lamports < minFor(sol)) leftBehind.push({ holding, reason: `below --min ${minFor(sol)} ${sol}` });
        else {
          // All of it: the fee payer pays the fee, and a wallet without data may go to 0.
          instructions.push(getTransferSolInstruction({ source: signer, destination: address(to), amount: lamports }));
          add(holding);
          solIn += lamports;
        }
      }
      if (instructions.length === 0) {
        skipped.push({ address: owner, reason: leftBehind.length ? [...new Set(leftBehind.map((l) => l.reason))].join('; ') : 'holds nothing' });
        return;
      }
      work.push({ planned: { ...candidate, holdings: [...holdings.values()], moves: [...moves.values()], fee: '0', leftBehind }, instructions, coldAtas, solIn, closes });
    });

    if (work.length === 0) return { deposits: [], skipped, transactions: [] };
    const lifetime = await latestLifetime(call);
    const payer = createNoopSigner(address(feePayer));

    // The cold token accounts that exist already need no CreateIdempotent (and cost no rent).
    const ataOf = (key: string) => {
      const [mint, program] = key.split(' ') as [string, string];
      return associatedTokenAddress(to, mint, program);
    };
    const neededAtas = [...new Set(work.flatMap((w) => [...w.coldAtas]))];
    const existing = await accounts(call, neededAtas.map(ataOf));
    const missing = new Set(neededAtas.filter((_, i) => existing[i] === null));

    const compile = (batch: DepositWork[]) => {
      const atas = new Set(batch.flatMap((w) => [...w.coldAtas]).filter((k) => missing.has(k)));
      const creates = [...atas].sort().map((key) => {
        const [mint, program] = key.split(' ') as [string, string];
        return getCreateAssociatedTokenIdempotentInstruction({ payer, ata: address(associatedTokenAddress(to, mint, program)), owner: address(to), mint: address(mint), tokenProgram: address(program) });
      });
      return { ...compileLegacy(feePayer, lifetime, [...creates, ...batch.flatMap((w) => w.instructions)]), atas };
    };

    // Greedy packing: add deposits while the signed transaction still fits in 1,232 bytes.
    const batches: DepositWork[][] = [];
    let current: DepositWork[] = [];
    for (const w of work) {
      if (compile([w]).size > MAX_TRANSACTION_BYTES) throw new UsageError(`deposit ${short(w.planned.address)} alone needs a transaction above ${MAX_TRANSACTION_BYTES} bytes`);
      if (current.length && compile([...current, w]).size > MAX_TRANSACTION_BYTES) {
        batches.push(current);
        current = [];
      }
      current.push(w);
    }
    batches.push(current);

    const walletRent = await rentFor(call, 0);
    // What the fee payer really pays: each cold token account's rent once, whichever transaction lands first creates it.
    let atasRent = 0n;
    for (const key of missing) {
      const space = tokenAccountSpace(key.split(' ')[1]!);
      const clusterRent = await rentFor(call, space);
      if (clusterRent !== rentExemptMinimum(space)) throw new UsageError(`the cluster's rent for a ${space}-byte token account is ${clusterRent} lamports, not the ${rentExemptMinimum(space)} the signer reckons with`);
      atasRent += clusterRent;
    }

    let fees = 0n;
    const transactions: UnsignedSweepTx[] = [];
    for (const [n, batch] of batches.entries()) {
      const { bytes } = compile(batch);
      const base64 = Buffer.from(bytes).toString('base64');
      const fee = messageFee(readSweepMessage(bytes, `tx-${n}`));
      await checkClusterFee(call, base64, fee.network);
      fees += fee.network;
      if (!coldAccount && batch.reduce((s, w) => s + w.solIn, 0n) < walletRent) {
        throw new UsageError(`the cold wallet does not exist yet and transaction ${n} would leave it below the rent-exempt minimum: send it ${walletRent} lamports first`);
      }
      // The first deposit carries what the transaction costs beyond the deposits' own signatures.
      batch.forEach((w, i) => {
        w.planned.fee = (i === 0 ? fee.total - LAMPORTS_PER_SIGNATURE * BigInt(batch.length - 1) : LAMPORTS_PER_SIGNATURE).toString();
      });
      const closes = Object.assign({}, ...batch.map((w) => w.closes)) as Record<string, string>;
      const payload: SolanaSweepPayload = { message: base64, blockhash: lifetime.blockhash, lastValidBlockHeight: lifetime.lastValidBlockHeight.toString(), fee: fee.network.toString(), ...(Object.keys(closes).length ? { closes } : {}) };
      const deposits = batch.map((w) => w.planned.address);
      transactions.push({ id: `tx-${n}`, signers: [feePayer, ...deposits], deposits, after: [], payload });
    }
    const needed = fees + atasRent + walletRent;
    if (payerAccount.lamports < needed) {
      throw new UsageError(
        `the fee payer holds ${payerAccount.lamports} lamports; this sweep needs ${needed} (fees ${fees}, ${missing.size} cold token account${missing.size === 1 ? '' : 's'} for ${atasRent}, and ${walletRent} it must keep): fund it first`,
      );
    }
    log.info({ chain: network.chain, deposits: work.length, transactions: transactions.length, fees: fees.toString(), coldTokenAccounts: missing.size }, 'solana sweep planned');
    return { deposits: work.map((w) => w.planned), skipped, transactions };
  },
};
