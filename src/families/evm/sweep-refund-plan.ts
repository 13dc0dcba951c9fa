import { getAddress, toQuantity } from 'ethers';
import type { ResolvedNetwork } from '../../chains/registry.ts';
import { UsageError } from '../../domain/errors.ts';
import { formatUnits } from '../../domain/money.ts';
import type { Rpc } from '../jsonrpc/rpc.ts';
import { quantity } from '../jsonrpc/schemas.ts';
import type { Holding, PlannedDeposit, RefundAsk, SweepCandidate, SweepPlan, UnsignedSweepTx } from '../sweep.ts';
import { ERC20_ABI, type EvmSweepPayload } from './sweep-payload.ts';
import { checkChainId, likelyCost, readFees, readLive, requireFeePayerFunds, rpcCall, withMargin } from './sweep-reads.ts';

// A refund on an EVM chain (docs/sweeps/evm.md#refunds): the address sends exactly the refund to
// the buyer with its own transaction (`token.transfer(buyer, amount)` or a native transfer), and
// nothing else moves. With a fee payer, a top-up of the transfer's whole gas reserve goes first,
// so what stays on the address is exact. Never the Sweeper: it moves whole balances, and its
// signed intent can be replayed by anyone until its deadline, which would hand later arrivals on
// the address to the buyer.

export async function planRefund(
  rpc: Rpc,
  input: { network: ResolvedNetwork; candidates: SweepCandidate[]; to: string; feePayer: string | null; refund: RefundAsk },
): Promise<Pick<SweepPlan, 'deposits' | 'skipped' | 'transactions'>> {
  const { network, candidates, to, feePayer, refund } = input;
  const [candidate] = candidates;
  if (!candidate || candidates.length !== 1) throw new UsageError(`a refund is paid from exactly one address, not ${candidates.length}`);
  if (refund.amount <= 0n) throw new UsageError('the refund amount must be above zero');
  const address = getAddress(candidate.address);
  if (to === address) throw new UsageError('the refund goes to the very address it is paid from');
  if (feePayer === address) throw new UsageError('the fee payer is the address the refund is paid from: plan without --fee-payer');
  const call = rpcCall(rpc);
  await checkChainId(call, network);

  const native = network.native;
  const token = refund.token === null ? null : network.tokens.find((t) => t.address !== null && getAddress(t.address) === getAddress(refund.token as string));
  if (token === undefined) throw new UsageError(`${refund.symbol} (${refund.token}) is not a token of ${network.chain} ${network.network} in the configuration`);
  const coin = token ?? native;
  if (coin.decimals !== refund.decimals) throw new UsageError(`${coin.symbol} has ${coin.decimals} decimals on ${network.chain}, but the refund says ${refund.decimals}`);

  const [fees, live] = await Promise.all([readFees(rpc), readLive(call, network, candidate)]);
  // An account with code other than an EIP-7702 delegation is a contract: no key sends from it.
  if (live.code !== '0x' && !live.code.startsWith('0xef0100')) throw new UsageError(`${address} is a contract, not a key's account: it cannot send a refund`);
  const refunded = token === null ? null : live.tokens.find((t) => t.address === getAddress(token.address as string));
  const held = token === null ? live.native : (refunded?.amount ?? 0n);
  const show = (amount: bigint, c: { symbol: string; decimals: number } = coin) => `${formatUnits(amount, c.decimals)} ${c.symbol}`;
  if (held < refund.amount) throw new UsageError(`${address} holds ${show(held)}, less than the refund of ${show(refund.amount)}`);

  const nativeHolding = (amount: bigint): Holding => ({ symbol: native.symbol, token: null, decimals: native.decimals, amount: amount.toString() });
  const tokenHolding = (t: (typeof live.tokens)[number], amount = t.amount): Holding => ({ symbol: t.symbol, token: t.address, decimals: t.decimals, amount: amount.toString() });
  const holdings = [...(live.native > 0n ? [nativeHolding(live.native)] : []), ...live.tokens.map((t) => tokenHolding(t))];
  const leftBehind: PlannedDeposit['leftBehind'] = live.tokens
    .filter((t) => t !== refunded)
    .map((t) => ({ holding: tokenHolding(t), reason: `not refunded: the refund is in ${coin.symbol}` }));
  if (refunded && held > refund.amount) leftBehind.unshift({ holding: tokenHolding(refunded, held - refund.amount), reason: `not refunded: the ${coin.symbol} beyond the refund` });

  const estimate = async (request: Record<string, string>) => BigInt(await call('eth_estimateGas', [request], quantity));
  const common = { chainId: network.chainId as number, maxFeePerGas: fees.maxFeePerGas.toString(), maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString() };
  const transactions: UnsignedSweepTx[] = [];
  const push = (payload: EvmSweepPayload, signer: string, deposits: string[], after: string[] = []) => {
    const id = `tx-${transactions.length}`;
    transactions.push({ id, signers: [signer], deposits, after, payload });
    return id;
  };
  const feePayerNonce = feePayer === null ? 0 : Number(BigInt(await call('eth_getTransactionCount', [feePayer, 'pending'], quantity)));
  /** The top-up's own fee (gas limit × max fee), paid by the fee payer; 0 without one. */
  let topUpFee = 0n;
  /** The fee payer sends the address a transfer's whole gas reserve; returns the top-up's id for the transfer's `after`. */
  const topUp = async (reserve: bigint): Promise<string[]> => {
    if (feePayer === null) return [];
    const gas = withMargin(await estimate({ from: feePayer, to: address, value: toQuantity(reserve) }));
    topUpFee = gas * fees.maxFeePerGas;
    return [push({ kind: 'top-up', ...common, from: feePayer, nonce: feePayerNonce, gasLimit: gas.toString(), to: address, value: reserve.toString() }, feePayer, [])];
  };

  let move: bigint;
  /** What the address itself pays in fees (0 when a fee payer tops it up with the whole reserve). */
  let ownFee: bigint;
  /** The transfer's own fee reserve (gas limit × max fee), whoever funds it. */
  let transferFee: bigint;
  /** Native coin on the address after the transfer, at today's fees. */
  let nativeStays: bigint;
  if (token !== null) {
    const gas = withMargin(await estimate({ from: address, to: token.address as string, data: ERC20_ABI.encodeFunctionData('transfer', [to, refund.amount]) }));
    const reserve = gas * fees.maxFeePerGas;
    if (feePayer === null && live.native < reserve) {
      throw new UsageError(`${address} holds ${show(live.native, native)}, less than the up to ${show(reserve, native)} its ${coin.symbol} transfer's gas may cost: plan with --fee-payer`);
    }
    const after = await topUp(reserve);
    push({ kind: 'token', ...common, from: address, nonce: live.nonce, gasLimit: gas.toString(), token: token.address as string, amount: refund.amount.toString() }, address, [address], after);
    move = refund.amount;
    ownFee = feePayer === null ? reserve : 0n;
    transferFee = reserve;
    nativeStays = live.native + (reserve - ownFee) - likelyCost(gas, fees);
  } else {
    // The buyer may be a contract (a smart wallet) whose receive costs more than 21,000.
    const gas = await estimate({ from: address, to, value: toQuantity(1) });
    const fee = gas * fees.maxFeePerGas;
    const after = await topUp(fee);
    if (feePayer !== null || held - refund.amount >= fee) {
      move = refund.amount;
    } else {
      if (refund.amount <= fee) throw new UsageError(`the refund of ${show(refund.amount)} does not cover its own transfer fee of up to ${show(fee)}: plan with --fee-payer`);
      move = refund.amount - fee;
    }
    push({ kind: 'native', ...common, from: address, nonce: live.nonce, gasLimit: gas.toString(), value: move.toString() }, address, [address], after);
    ownFee = feePayer === null ? fee : 0n;
    transferFee = fee;
    nativeStays = held - move + (fee - ownFee) - gas * fees.likelyPerGas;
  }
  if (nativeStays > 0n) {
    const why = feePayer === null ? "less the transfer's gas" : "with what the fee payer's gas top-up does not spend";
    leftBehind.unshift({ holding: nativeHolding(nativeStays), reason: `not refunded: the address's ${native.symbol}, ${why}, about this much at today's fees` });
  }
  if (feePayer !== null) await requireFeePayerFunds(call, network, feePayer, transactions.filter((tx) => tx.signers[0] === feePayer).map((tx) => tx.payload as EvmSweepPayload));

  const deposit: PlannedDeposit = {
    ...candidate,
    address,
    holdings,
    moves: [refunded ? tokenHolding(refunded, move) : nativeHolding(move)],
    // Every fee the plan's transactions can cost, whoever pays (the verifier reads the same from the payloads).
    fee: (transferFee + topUpFee).toString(),
    leftBehind,
  };
  return { deposits: [deposit], skipped: [], transactions };
}
