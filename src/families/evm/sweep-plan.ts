import { readFileSync } from 'node:fs';
import { getAddress, keccak256, toQuantity } from 'ethers';
import type { ResolvedNetwork } from '../../chains/registry.ts';
import { ChainError, UsageError } from '../../domain/errors.ts';
import type { Logger } from '../../logger.ts';
import { createRpc, type Rpc } from '../jsonrpc/rpc.ts';
import { hexData, quantity } from '../jsonrpc/schemas.ts';
import type { FamilySweepPlanner, Holding, PlannedDeposit, SweepCandidate, SweepPlan, UnsignedSweepTx } from '../sweep.ts';
import {
  CREATE2_DEPLOYER,
  delegationCode,
  ERC20_ABI,
  SWEEPER_ADDRESS,
  SWEEPER_INIT_CODE_HASH,
  type EvmBatchPayload,
  type EvmSweepPayload,
} from './sweep-payload.ts';
import { planRefund } from './sweep-refund-plan.ts';
import { checkChainId, likelyCost, readFees, readLive, requireFeePayerFunds, rpcCall, withMargin, type Live } from './sweep-reads.ts';

// The server half of an EVM sweep: live balances, nonces and fees from the network's RPC, then
// unsigned transactions (sweep-payload.ts). Three shapes, by what the network and flags allow:
//  - EIP-7702 with a fee payer: one type-4 transaction per batch of deposits; each deposit
//    delegates to the Sweeper and the fee payer pays all the gas; deposits end empty.
//  - No EIP-7702, with a fee payer: a top-up of exactly the gas reserve to each token deposit that
//    lacks it, then the deposit's own ERC-20 transfers (after the top-up is final).
//  - Native coins (where no batch takes them): the deposit sends its balance less the fee.
// A refund (one exact amount to a buyer) is planned by sweep-refund-plan.ts instead.

/** Gas the batch spends per deposit besides its token transfers: the 7702 authorization (25,000 for an empty account), the call into the deposit, ecrecover and hashing, the native send. */
const AUTH_GAS = 25_000n;
const ORDER_GAS = 30_000n;
const NATIVE_SEND_GAS = 12_000n;
/** balanceOf before each transfer: a cold account and a cold slot. */
const BALANCE_OF_GAS = 5_000n;
const TX_BASE_GAS = 21_000n;
/** A batch stays well under EIP-7825's per-transaction cap of 2^24 gas and any chain's block limit. */
const MAX_BATCH_GAS = 8_000_000n;
const MAX_BATCH_DEPOSITS = 60;
/** How long the signed intents stay valid: the time to carry the plan to the offline machine and back. */
const DEADLINE_SECONDS = 3 * 24 * 3600;
const READ_CONCURRENCY = 8;

/** A payload before the planner fills in its sender and nonce (distributes over the union). */
type WithoutSender<T> = T extends unknown ? Omit<T, 'from' | 'nonce'> : never;

async function inBatches<T, R>(items: readonly T[], size: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(fn))));
  return out;
}

/** The Sweeper's creation code, from the committed build (contracts/build/Sweeper.json), checked against the hash the signer trusts. */
function sweeperInitCode(): string {
  const artifact = JSON.parse(readFileSync(new URL('../../../contracts/build/Sweeper.json', import.meta.url), 'utf8')) as { bytecode: string };
  if (keccak256(artifact.bytecode) !== SWEEPER_INIT_CODE_HASH) {
    throw new ChainError('contracts/build/Sweeper.json does not hash to SWEEPER_INIT_CODE_HASH (src/families/evm/sweep-payload.ts): rebuild or restore it');
  }
  return artifact.bytecode;
}

const planner: FamilySweepPlanner = {
  async plan({ network, config, log, candidates, to, feePayer, min, refund }) {
    if (network.chainId === null) throw new UsageError(`${network.chain} has no EVM chain id`);
    const rpc = createRpc({ url: network.rpcUrl, chainId: network.chainId, log, timeoutMs: config.indexer.rpcTimeoutMs, maxBackoffMs: 2_000 });
    try {
      const common = { network, candidates, to: getAddress(to), feePayer: feePayer === null ? null : getAddress(feePayer) };
      if (refund) return await planRefund(rpc, { ...common, refund });
      return await planWith(rpc, { ...common, log, min });
    } finally {
      rpc.close();
    }
  },
};

export const evmSweepPlanner = planner;

async function planWith(
  rpc: Rpc,
  input: { network: ResolvedNetwork; log: Logger; candidates: SweepCandidate[]; to: string; feePayer: string | null; min: Record<string, bigint> },
): Promise<Pick<SweepPlan, 'deposits' | 'skipped' | 'transactions'>> {
  const { network, candidates, to, feePayer, min } = input;
  const chainId = network.chainId as number;
  const call = rpcCall(rpc);

  await checkChainId(call, network);
  const fees = await readFees(rpc);
  const live: Live[] = await inBatches(candidates, READ_CONCURRENCY, (candidate) => readLive(call, network, candidate));

  const nativeHolding = (amount: bigint): Holding => ({ symbol: network.native.symbol, token: null, decimals: network.native.decimals, amount: amount.toString() });
  const tokenHolding = (t: Live['tokens'][number], amount = t.amount): Holding => ({ symbol: t.symbol, token: t.address, decimals: t.decimals, amount: amount.toString() });
  const belowMin = (symbol: string, amount: bigint) => amount < (min[symbol] ?? 0n);
  const minReason = (symbol: string) => `below --min (${min[symbol]} atomic ${symbol})`;

  const deposits: PlannedDeposit[] = [];
  const skipped: SweepPlan['skipped'] = [];
  const transactions: UnsignedSweepTx[] = [];
  const feePayerTxs: { tx: UnsignedSweepTx; payload: EvmSweepPayload }[] = [];
  const common = { chainId, maxFeePerGas: fees.maxFeePerGas.toString(), maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString() };
  const push = (payload: EvmSweepPayload, meta: { signers: string[]; deposits: string[]; after?: string[] }): UnsignedSweepTx => {
    const tx: UnsignedSweepTx = { id: `tx-${transactions.length}`, signers: meta.signers, deposits: meta.deposits, after: meta.after ?? [], payload };
    transactions.push(tx);
    return tx;
  };
  let feePayerNonce = feePayer === null ? 0 : Number(BigInt(await call('eth_getTransactionCount', [feePayer, 'pending'], quantity)));
  const fromFeePayer = (payload: WithoutSender<EvmSweepPayload>, meta: { deposits: string[]; after?: string[]; extraSigners?: string[] }) => {
    const full = { ...payload, from: feePayer as string, nonce: feePayerNonce++ } as EvmSweepPayload;
    const tx = push(full, { signers: [feePayer as string, ...(meta.extraSigners ?? [])], deposits: meta.deposits, ...(meta.after ? { after: meta.after } : {}) });
    feePayerTxs.push({ tx, payload: full });
    return tx;
  };
  const estimate = async (request: Record<string, string>) => BigInt(await call('eth_estimateGas', [request], quantity));

  const use7702 = feePayer !== null && network.eip7702 === true;
  const batchOrders: { live: Live; planned: PlannedDeposit; tokens: Live['tokens']; authNonce: number | null; gas: bigint }[] = [];

  for (const d of live) {
    const holdings = [...(d.native > 0n ? [nativeHolding(d.native)] : []), ...d.tokens.map((t) => tokenHolding(t))];
    if (holdings.length === 0) {
      skipped.push({ address: d.address, reason: 'nothing to move' });
      continue;
    }
    const leftBehind: PlannedDeposit['leftBehind'] = [];
    const movableTokens = d.tokens.filter((t) => {
      if (!belowMin(t.symbol, t.amount)) return true;
      leftBehind.push({ holding: tokenHolding(t), reason: minReason(t.symbol) });
      return false;
    });
    const nativeMovable = d.native > 0n && !belowMin(network.native.symbol, d.native);
    if (movableTokens.length === 0 && !nativeMovable) {
      skipped.push({ address: d.address, reason: `holds only amounts below --min` });
      continue;
    }
    const planned: PlannedDeposit = { ...d.candidate, address: d.address, holdings, moves: [], fee: '0', leftBehind };

    if (use7702) {
      // The Sweeper moves the whole native balance too, whatever --min says: it is in the same call.
      let gas = ORDER_GAS + NATIVE_SEND_GAS;
      for (const t of movableTokens) gas += (await estimate({ from: d.address, to: t.address, data: ERC20_ABI.encodeFunctionData('transfer', [to, t.amount]) })) - TX_BASE_GAS + BALANCE_OF_GAS;
      const delegated = d.code === delegationCode(SWEEPER_ADDRESS);
      if (!delegated) gas += AUTH_GAS;
      batchOrders.push({ live: d, planned, tokens: movableTokens, authNonce: delegated ? null : d.nonce, gas });
      planned.moves = [...(d.native > 0n ? [nativeHolding(d.native)] : []), ...movableTokens.map((t) => tokenHolding(t))];
      deposits.push(planned);
      continue;
    }

    let nonce = d.nonce;
    let ownFee = 0n;
    if (movableTokens.length > 0) {
      const transfers = [];
      for (const t of movableTokens) {
        const gas = withMargin(await estimate({ from: d.address, to: t.address, data: ERC20_ABI.encodeFunctionData('transfer', [to, t.amount]) }));
        transfers.push({ t, gas });
      }
      const reserve = transfers.reduce((sum, x) => sum + x.gas * fees.maxFeePerGas, 0n);
      const topUp = reserve > d.native ? reserve - d.native : 0n;
      if (topUp > 0n && feePayer === null) {
        for (const { t } of transfers) leftBehind.push({ holding: tokenHolding(t), reason: `no ${network.native.symbol} on the deposit for the transfer's gas: plan with --fee-payer` });
      } else {
        let after: string[] = [];
        if (topUp > 0n) {
          const gas = withMargin(await estimate({ from: feePayer as string, to: d.address, value: toQuantity(topUp) }));
          after = [fromFeePayer({ kind: 'top-up', ...common, gasLimit: gas.toString(), to: d.address, value: topUp.toString() }, { deposits: [] }).id];
          // The deposit's fee states every fee its transactions can cost, the fee payer's top-up included.
          ownFee += gas * fees.maxFeePerGas;
        }
        for (const { t, gas } of transfers) {
          push({ kind: 'token', ...common, from: d.address, nonce: nonce++, gasLimit: gas.toString(), token: t.address, amount: t.amount.toString() }, { signers: [d.address], deposits: [d.address], after });
          planned.moves.push(tokenHolding(t));
        }
        ownFee += reserve;
        const likelySpent = transfers.reduce((sum, x) => sum + likelyCost(x.gas, fees), 0n);
        leftBehind.push({
          holding: nativeHolding(d.native + topUp - likelySpent > 0n ? d.native + topUp - likelySpent : 0n),
          reason: `the gas reserve of the token transfers (${network.native.symbol} the deposit held, plus any top-up): what they do not spend stays, about this much at today's fees; a later plan sweeps it`,
        });
      }
    } else if (nativeMovable) {
      // The cold address may be a contract (a Safe) whose receive costs more than 21,000.
      const gas = await estimate({ from: d.address, to, value: toQuantity(1) });
      const fee = gas * fees.maxFeePerGas;
      if (d.native <= fee) {
        leftBehind.push({ holding: nativeHolding(d.native), reason: `less than the transfer's fee reserve (${fee} atomic ${network.native.symbol} at ${gas} gas)` });
      } else {
        const value = d.native - fee;
        push({ kind: 'native', ...common, from: d.address, nonce: nonce++, gasLimit: gas.toString(), value: value.toString() }, { signers: [d.address], deposits: [d.address] });
        planned.moves.push(nativeHolding(value));
        ownFee = fee;
        leftBehind.push({
          holding: nativeHolding(fee - gas * fees.likelyPerGas),
          reason: "the fee reserve the transfer does not spend (its max fee is twice today's base fee so it lands if fees rise), about this much at today's fees",
        });
      }
    }
    planned.fee = ownFee.toString();
    if (planned.moves.length === 0) {
      skipped.push({ address: d.address, reason: leftBehind.map((l) => `${l.holding.symbol}: ${l.reason}`).join('; ') });
      continue;
    }
    deposits.push(planned);
  }

  if (batchOrders.length > 0) {
    let deployId: string | null = null;
    const sweeperCode = await call('eth_getCode', [SWEEPER_ADDRESS, 'latest'], hexData);
    if (sweeperCode === '0x') {
      const proxyCode = await call('eth_getCode', [CREATE2_DEPLOYER, 'latest'], hexData);
      if (proxyCode === '0x') {
        throw new ChainError(
          `${network.chain} ${network.network} has no deterministic deployment proxy at ${CREATE2_DEPLOYER}, so the Sweeper cannot be placed at its address; see docs/sweeps/evm.md`,
        );
      }
      const initCode = sweeperInitCode();
      const gas = withMargin(await estimate({ from: feePayer as string, to: CREATE2_DEPLOYER, data: `0x${'00'.repeat(32)}${initCode.slice(2)}` }));
      deployId = fromFeePayer({ kind: 'deploy-sweeper', ...common, gasLimit: gas.toString(), initCode }, { deposits: [] }).id;
      // Its fee is stated on the first deposit it serves, so the deposits' fees add up to every transaction's.
      const first = (batchOrders[0] as (typeof batchOrders)[number]).planned;
      first.fee = (BigInt(first.fee) + gas * fees.maxFeePerGas).toString();
    }
    const deadline = Math.floor(Date.now() / 1000) + DEADLINE_SECONDS;
    let batch: typeof batchOrders = [];
    let batchGas = 0n;
    const flush = () => {
      if (batch.length === 0) return;
      const gasLimit = withMargin(batchGas + TX_BASE_GAS + 10_000n);
      // The batch's fee (gas limit × max fee) is stated per deposit, in proportion to its gas; the rounding goes to the first.
      const batchFee = gasLimit * fees.maxFeePerGas;
      const shares = batch.map((o) => (batchFee * o.gas) / batchGas);
      shares[0] = (shares[0] as bigint) + batchFee - shares.reduce((a, b) => a + b, 0n);
      batch.forEach((o, i) => {
        o.planned.fee = (BigInt(o.planned.fee) + (shares[i] as bigint)).toString();
      });
      const orders: EvmBatchPayload['orders'] = batch.map((o) => ({
        deposit: o.live.address,
        tokens: o.tokens.map((t) => t.address),
        authNonce: o.authNonce,
        native: o.live.native.toString(),
        amounts: o.tokens.map((t) => t.amount.toString()),
      }));
      const addresses = batch.map((o) => o.live.address);
      fromFeePayer(
        { kind: '7702-batch', ...common, gasLimit: gasLimit.toString(), sweeper: SWEEPER_ADDRESS, deadline, orders },
        { deposits: addresses, extraSigners: addresses, ...(deployId ? { after: [deployId] } : {}) },
      );
      batch = [];
      batchGas = 0n;
    };
    for (const order of batchOrders) {
      if (batch.length >= MAX_BATCH_DEPOSITS || batchGas + order.gas > MAX_BATCH_GAS) flush();
      batch.push(order);
      batchGas += order.gas;
    }
    flush();
  }

  if (feePayer !== null) await requireFeePayerFunds(call, network, feePayer, feePayerTxs.map((x) => x.payload));
  return { deposits, skipped, transactions };
}
