/**
 * EVM sweeps on a real Hardhat 3 node (EDR, default hardfork Osaka: EIP-7702 type-4 transactions
 * run). Deposits derived from a test seed that never held ETH receive test tokens (TestToken as
 * USDC, NoBoolToken as USDT) and some native ETH; the family's own modules then plan (server),
 * sign (offline, pure) and send: tokens and ETH reach the cold address, deposits end empty, the fee
 * payer pays the gas. Through modules, not the CLI: the framework's `chaingate sweep` lands apart.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Contract, getAddress, parseEther, parseUnits, Transaction, TypedDataEncoder, Wallet } from 'ethers';
import type { ResolvedNetwork } from '../../src/chains/registry.ts';
import type { Config } from '../../src/config/schema.ts';
import { deployFixtures, type EvmFixtures } from '../../src/devnet/evm-fixtures.ts';
import { startHardhatNode, type HardhatNode } from '../../src/devnet/hardhat-node.ts';
import { evmSweepPlanner } from '../../src/families/evm/sweep-plan.ts';
import { delegationCode, type EvmBatchPayload, SWEEPER_ABI, SWEEPER_ADDRESS, sweepTypedData } from '../../src/families/evm/sweep-payload.ts';
import { evmSweepSender } from '../../src/families/evm/sweep-send.ts';
import { evmSweepSigner } from '../../src/families/evm/sweep-sign.ts';
import { evmSweepVerifier } from '../../src/families/evm/sweep-verify.ts';
import type { SignedSweepTx, SweepCandidate, SweepPlan } from '../../src/families/sweep.ts';
import { createLogger } from '../../src/logger.ts';
import { checkDecoded } from '../../src/sweep/check-decoded.ts';
import { planId } from '../../src/sweep/plan-file.ts';
import { accountNode, broadcastAll as broadcastOn, candidate, checkVerified, depositAddress, feePayer, prepareSweepChain, seedBytes, signOffline, token as fixtureToken } from '../helpers/evm-sweep.ts';

const cold = getAddress('0x000000000000000000000000000000000000c01d');
const attacker = getAddress('0x00000000000000000000000000000000bad0bad0');

let node: HardhatNode;
let fx: EvmFixtures;
let config: Config;
let network: ResolvedNetwork;
const log = createLogger('silent');

function planFile(chainPart: Pick<SweepPlan, 'deposits' | 'skipped' | 'transactions'>, to = cold): SweepPlan {
  return { format: 'chaingate-sweep-plan/1', id: 'test', kind: 'sweep', chain: 'ethereum', family: 'evm', network: network.network, testnet: true, to, feePayer, createdAt: new Date().toISOString(), ...chainPart };
}

async function plan(candidates: SweepCandidate[], options: { net?: ResolvedNetwork; feePayer?: string | null; min?: Record<string, bigint> } = {}) {
  return planFile(
    await evmSweepPlanner.plan({ network: options.net ?? network, config, log, candidates, to: cold, feePayer: options.feePayer === undefined ? feePayer : options.feePayer, min: options.min ?? {} }),
  );
}

const broadcastAll = (signed: SignedSweepTx[]) => broadcastOn({ node, network, config }, signed);
const token = (c: Contract) => fixtureToken(fx, c);
const eth = (a: string) => node.provider.getBalance(a);
const usdc = (n: string) => parseUnits(n, 6);
const gwei = (n: string) => parseUnits(n, 'gwei').toString();
const kinds = (p: SweepPlan) => p.transactions.map((tx) => (tx.payload as { kind: string }).kind);
const wallet = (key: Uint8Array) => new Wallet(`0x${Buffer.from(key).toString('hex')}`);
/** The plan with its id recomputed, as a tamperer would. */
const withId = (p: SweepPlan): SweepPlan => ({ ...p, id: planId(p) });
/** A transaction's fee bound: gas limit × max fee per gas. */
const maxCost = (tx: SweepPlan['transactions'][number]) => {
  const p = tx.payload as { gasLimit: string; maxFeePerGas: string };
  return BigInt(p.gasLimit) * BigInt(p.maxFeePerGas);
};

describe('EVM sweeps on Hardhat (Osaka: EIP-7702)', () => {
  before(async () => {
    node = await startHardhatNode();
    fx = await deployFixtures(node);
    ({ config, network } = await prepareSweepChain(node, fx));
    assert.equal(network.eip7702, true, 'the Sepolia defaults say 7702; a DEVNET over them inherits it');
  });
  after(() => node?.stop());

  test('one fee-payer type-4 transaction empties token deposits that never held ETH, and native ones; a later sweep reuses the delegation', async () => {
    const [u, t] = [token(fx.usdc), token(fx.usdt)];
    await u.send(depositAddress(0), usdc('100'));
    await t.send(depositAddress(0), usdc('50'));
    await t.send(depositAddress(1), usdc('7'));
    await (await fx.payer.sendTransaction({ to: depositAddress(2), value: parseEther('1.5') })).wait();
    await u.send(depositAddress(3), usdc('5'));
    await (await fx.payer.sendTransaction({ to: depositAddress(3), value: parseEther('0.01') })).wait();

    const p = await plan([0, 1, 2, 3, 4].map(candidate));
    assert.deepEqual(p.skipped, [{ address: depositAddress(4), reason: 'nothing to move' }]);
    assert.deepEqual(
      p.transactions.map((tx) => (tx.payload as { kind: string }).kind),
      ['deploy-sweeper', '7702-batch'],
    );
    const batch = p.transactions[1]!;
    assert.deepEqual(batch.after, ['tx-0']);
    assert.deepEqual(batch.deposits, [0, 1, 2, 3].map(depositAddress));
    assert.ok(p.deposits.every((d) => BigInt(d.fee) > 0n && d.leftBehind.length === 0));
    // The deposits' fees state every fee the transactions can cost, the fee payer's deployment and batch included.
    assert.equal(p.deposits.reduce((s, d) => s + BigInt(d.fee), 0n), p.transactions.reduce((s, tx) => s + maxCost(tx), 0n));

    const feePayerBefore = await eth(feePayer);
    const signed = signOffline(p);
    assert.equal(Transaction.from(signed[1]!.raw).type, 4);
    assert.equal(Transaction.from(signed[1]!.raw).authorizationList?.length, 4);
    const gas = await broadcastAll(signed);

    assert.equal(await u.balance(cold), usdc('105'));
    assert.equal(await t.balance(cold), usdc('57'));
    assert.equal(await eth(cold), parseEther('1.51'));
    for (const i of [0, 1, 2, 3]) {
      assert.equal(await eth(depositAddress(i)), 0n, `deposit ${i} holds no ETH`);
      assert.equal(await u.balance(depositAddress(i)), 0n);
      assert.equal(await t.balance(depositAddress(i)), 0n);
      assert.equal((await node.provider.getCode(depositAddress(i))).toLowerCase(), delegationCode(SWEEPER_ADDRESS), `deposit ${i} stays delegated`);
    }
    assert.ok((await eth(feePayer)) < feePayerBefore, 'the fee payer paid the gas');
    const first = gas.get('tx-1')!;
    assert.ok(first <= BigInt((batch.payload as { gasLimit: string }).gasLimit), 'the estimate covers what the batch used');

    // Late funds after the sweep: the next plan needs no new authorization and no deployment.
    await u.send(depositAddress(0), usdc('1'));
    await t.send(depositAddress(1), usdc('2'));
    const again = await plan([0, 1].map(candidate));
    assert.deepEqual(again.transactions.map((tx) => (tx.payload as { kind: string }).kind), ['7702-batch']);
    assert.deepEqual((again.transactions[0]!.payload as { orders: { authNonce: number | null }[] }).orders.map((o) => o.authNonce), [null, null]);
    const signedAgain = signOffline(again);
    assert.equal(Transaction.from(signedAgain[0]!.raw).authorizationList?.length ?? 0, 0);
    await broadcastAll(signedAgain);
    assert.equal(await u.balance(cold), usdc('106'));
    assert.equal(await t.balance(cold), usdc('59'));
  });

  test('gas per swept deposit, first sweep and later sweeps, standard ERC-20 and USDT-like (docs/sweeps/evm.md)', async (t) => {
    const figures: string[] = [];
    for (const [name, c, start] of [['ERC-20 (TestToken)', fx.usdc, 20], ['USDT-like (NoBoolToken)', fx.usdt, 40]] as const) {
      const one = [candidate(start)];
      const ten = Array.from({ length: 10 }, (_, i) => candidate(start + 1 + i));
      const sweep = async (candidates: SweepCandidate[]) => {
        for (const cand of candidates) await token(c).send(cand.address, usdc('12.5'));
        const p = await plan(candidates);
        const batch = p.transactions.find((tx) => (tx.payload as { kind: string }).kind === '7702-batch')!;
        const used = (await broadcastAll(signOffline(p))).get(batch.id)!;
        assert.ok(used <= BigInt((batch.payload as { gasLimit: string }).gasLimit));
        for (const cand of candidates) assert.equal(await token(c).balance(cand.address), 0n);
        return used;
      };
      const [first1, first10] = [await sweep(one), await sweep(ten)];
      const [later1, later10] = [await sweep(one), await sweep(ten)];
      const line = (label: string, g1: bigint, g10: bigint) =>
        `${name}, ${label}: one deposit ${g1} gas; ten in one transaction ${g10} gas, ${g10 / 10n} each, ${(g10 - g1) / 9n} per added deposit`;
      figures.push(line('first sweep (authorization)', first1, first10), line('later sweep (still delegated)', later1, later10));
      assert.ok(later10 < first10, 'a later sweep needs no authorization');
    }
    for (const f of figures) t.diagnostic(f);
  });

  test('the signer refuses a tampered plan, and an intent used for another destination reverts on chain', async () => {
    await token(fx.usdc).send(depositAddress(5), usdc('9'));
    const p = await plan([candidate(5)]);
    const batchIndex = p.transactions.findIndex((tx) => (tx.payload as { kind: string }).kind === '7702-batch');
    const tamper = (edit: (payload: Record<string, unknown>) => void, at = batchIndex): SweepPlan => {
      const copy = structuredClone(p);
      edit(copy.transactions[at]!.payload as Record<string, unknown>);
      return copy;
    };
    assert.throws(() => signOffline(tamper((x) => { x.sweeper = attacker; })), /another contract than chaingate's Sweeper/);
    assert.throws(() => signOffline(tamper((x) => { x.from = fx.addresses.other; })), /not the plan's fee payer/);
    assert.throws(() => signOffline(tamper((x) => { (x.orders as { deposit: string }[])[0]!.deposit = fx.addresses.other; })), /not one of the plan's deposits/);
    assert.throws(() => signOffline({ ...p, network: 'SEPOLIA' }), /chain id 31337, but the plan is for ethereum SEPOLIA \(11155111\)/);
    assert.throws(() => signOffline({ ...p, chain: 'bitcoin', family: 'bitcoin' }), /not EVM/);
    // The fee payer's key, asked for as a deposit of unknown index (how the framework may ask), is found the same way.
    assert.equal(evmSweepSigner.deriveKey(seedBytes, { address: feePayer, derivationIndex: null, source: 'fee-payer' }, p, 20).address, feePayer);
    assert.throws(() => evmSweepSigner.deriveFeePayerKey!(seedBytes, { ...p, feePayer: attacker }, 20), /not an address of this seed/);
    // From the account's xprv instead of the seed: the same keys, deposits and fee payer.
    const xprv = accountNode.extendedKey;
    assert.equal(evmSweepSigner.deriveKeyFromAccount!(xprv, candidate(5), p, 20).address, depositAddress(5));
    assert.equal(evmSweepSigner.deriveKeyFromAccount!(xprv, { address: feePayer, derivationIndex: null, source: 'fee-payer' }, p, 20).address, feePayer);
    assert.throws(() => evmSweepSigner.deriveKeyFromAccount!(accountNode.neuter().extendedKey, candidate(5), p, 20), /cannot sign/);
    // A deposit address that this seed does not derive at its index.
    assert.throws(() => evmSweepSigner.deriveKey(seedBytes, { ...candidate(5), derivationIndex: 6 }, p, 20), /deposit 6 derives another address/);

    // Signed for the cold address; an executor who swaps in another destination is refused by the Sweeper.
    const signed = signOffline(p);
    const batchTx = Transaction.from(signed[batchIndex]!.raw);
    const [orders] = SWEEPER_ABI.decodeFunctionData('sweepMany', batchTx.data) as unknown as [{ deposit: string; to: string; tokens: string[]; deadline: bigint; v: number; r: string; s: string }[]];
    const forged = orders.map((o) => ({ deposit: o.deposit, to: attacker, tokens: [...o.tokens], deadline: o.deadline, v: o.v, r: o.r, s: o.s }));
    const relay = new Wallet(node.privateKeys[3]!, node.provider);
    // Delegate first, honestly (the plan's own transactions), then try the forged call from a stranger.
    await broadcastAll(signed.slice(0, batchIndex));
    const forgedCall = SWEEPER_ABI.encodeFunctionData('sweepMany', [forged]);
    // Hardhat's automine answers a reverting transaction with its revert data (a real node mines it as failed).
    const refusal = (await relay
      .sendTransaction({ type: 4, to: SWEEPER_ADDRESS, data: forgedCall, authorizationList: batchTx.authorizationList ?? [], gasLimit: 500_000n })
      .then((tx) => tx.wait())
      .then(
        () => null,
        (err: { data?: string; error?: { data?: string }; info?: { error?: { data?: string } } }) => err.data ?? err.error?.data ?? err.info?.error?.data ?? null,
      )) as string | null;
    assert.ok(refusal !== null, 'the forged sweep must revert');
    assert.equal(SWEEPER_ABI.parseError(refusal)?.name, 'BadSignature');
    assert.equal(await token(fx.usdc).balance(attacker), 0n);
    // The honest batch still works afterwards (the forged attempt changed nothing but a nonce it did not own).
    await broadcastAll(signed.slice(batchIndex));
    assert.equal(await token(fx.usdc).balance(depositAddress(5)), 0n);
  });

  test('a plan whose payload burns the deposit in fees, relabelled or not, is refused; a DEVNET label accepts only devnet chain ids (issue 45)', async () => {
    await (await fx.payer.sendTransaction({ to: depositAddress(11), value: parseEther('1.5') })).wait();
    const honest = withId(await plan([candidate(11)], { feePayer: null }));
    assert.deepEqual(kinds(honest), ['native']);
    const read = (p: SweepPlan) => checkDecoded(p, p.transactions.map((tx) => evmSweepVerifier.decodeUnsigned(p, tx)), { maxFee: null });
    assert.equal(read(honest).nativeMoved, BigInt(honest.deposits[0]!.moves[0]!.amount));

    // The payload sends 0.0001 ETH and leaves the rest to the validator as a priority fee of 71,423 gwei; the summary is untouched.
    const burn = (p: SweepPlan, edit: (x: SweepPlan) => void = () => {}) => {
      const copy = structuredClone(p);
      Object.assign(copy.transactions[0]!.payload as object, { gasLimit: '21000', value: parseEther('0.0001').toString(), maxFeePerGas: gwei('71423'), maxPriorityFeePerGas: gwei('71423') });
      edit(copy);
      return withId(copy);
    };
    const burning = burn(honest);
    assert.throws(() => read(burning), /the plan's summary moves 1\.49\d+ ETH to 0x0+C01D, but its transactions move 0\.0001 ETH: refused/);
    // The summary edited to agree: the fee bound refuses it, unless --max-fee allows it explicitly.
    const agreeing = (x: SweepPlan) => Object.assign(x.deposits[0]!, { moves: [{ ...x.deposits[0]!.moves[0]!, amount: parseEther('0.0001').toString() }], fee: (21_000n * BigInt(gwei('71423'))).toString() });
    const owned = burn(honest, agreeing);
    assert.throws(() => read(owned), /can pay 1\.499883 ETH in fees, more than 0\.005 ETH per deposit moved \(1\): refused, nothing signed; if that is right, sign again with --max-fee 1\.499883/);
    assert.equal(checkDecoded(owned, owned.transactions.map((tx) => evmSweepVerifier.decodeUnsigned(owned, tx)), { maxFee: parseEther('1.5') }).fee, parseEther('1.499883'));

    // Relabelled MAINNET, the payload's chain id 1 too: refused the same ways; with the Hardhat chain id left, refused for it.
    const mainnet = (x: SweepPlan, chainId = 1) => {
      Object.assign(x, { network: 'MAINNET', testnet: false });
      (x.transactions[0]!.payload as { chainId: number }).chainId = chainId;
    };
    assert.throws(() => read(burn(honest, mainnet)), /summary moves 1\.49\d+ ETH .* but its transactions move 0\.0001 ETH/);
    assert.throws(() => read(burn(honest, (x) => { mainnet(x); agreeing(x); })), /more than 0\.005 ETH per deposit moved/);
    const relabelled = withId(structuredClone(honest));
    Object.assign(relabelled, { network: 'MAINNET', testnet: false });
    assert.throws(() => read(relabelled), /tx-0: carries chain id 31337, but ethereum MAINNET is 1/);
    assert.throws(() => signOffline(relabelled), /tx-0: chain id 31337, but the plan is for ethereum MAINNET \(1\)/);

    // DEVNET no longer switches the chain id off: BSC's 56 is refused by the signer and by the verifier.
    const bsc = structuredClone(honest);
    (bsc.transactions[0]!.payload as { chainId: number }).chainId = 56;
    assert.throws(() => signOffline(withId(bsc)), /tx-0: chain id 56, but the plan is for ethereum DEVNET \(31337 or 1337\)/);
    assert.throws(() => read(withId(bsc)), /tx-0: carries chain id 56, but ethereum DEVNET is 31337 or 1337/);
    assert.throws(() => signOffline({ ...honest, network: 'HOLESKY' }), /the plan says ethereum testnet HOLESKY; the registry's testnet networks are SEPOLIA, DEVNET/);

    // The honest plan signs, its raw reads as its payload, and the chain takes it under that txid.
    const signed = signOffline(honest);
    await broadcastAll(signed);
    assert.equal(await eth(cold), parseEther('1.51') + BigInt(honest.deposits[0]!.moves[0]!.amount));
  });

  test('the verifier refuses payloads paying elsewhere or moving tokens the plan does not hold, and signed raws that are not the plan\'s', async () => {
    await token(fx.usdc).send(depositAddress(12), usdc('4'));
    await token(fx.usdt).send(depositAddress(13), usdc('6'));
    await (await fx.payer.sendTransaction({ to: depositAddress(13), value: parseEther('0.02') })).wait();
    const p = withId(await plan([12, 13].map(candidate)));
    const batchIndex = p.transactions.findIndex((tx) => (tx.payload as { kind: string }).kind === '7702-batch');
    const batch = p.transactions[batchIndex]!;
    const decoded = checkVerified(p, signOffline(p))[batchIndex]!;
    // The batch reads as what the plan expects each order to move: the balances at planning.
    assert.deepEqual(decoded.pays.map((x) => [x.symbol, x.amount]), [['USDC', usdc('4')], ['ETH', parseEther('0.02')], ['USDT', usdc('6')]]);
    assert.deepEqual(decoded.spends, [feePayer, depositAddress(12), depositAddress(13)]);
    const read = (x: SweepPlan) => checkDecoded(x, x.transactions.map((tx) => evmSweepVerifier.decodeUnsigned(x, tx)), { maxFee: null });
    const tamper = (edit: (payload: EvmBatchPayload, x: SweepPlan) => void) => {
      const copy = structuredClone(p);
      edit(copy.transactions[batchIndex]!.payload as EvmBatchPayload, copy);
      return withId(copy);
    };
    assert.throws(() => read(tamper((x) => { x.orders[1]!.native = parseEther('0.01').toString(); })), /summary moves 0\.02 ETH .* but its transactions move 0\.01 ETH/);
    assert.throws(() => read(tamper((x) => { x.orders[0]!.tokens = [fx.addresses.usdt]; })), /moves token 0x[0-9a-fA-F]{40}, which the plan does not list among the holdings of 0x/);
    assert.throws(() => read(tamper((x) => { x.orders.push({ ...x.orders[0]! }); })), /sweeps 0x[0-9a-fA-F]{40} twice/);
    assert.throws(() => read(tamper((x) => { x.maxPriorityFeePerGas = (BigInt(x.maxFeePerGas) + 1n).toString(); })), /priority fee per gas is above its max fee per gas/);
    assert.throws(() => read(tamper((x) => { x.gasLimit = (BigInt(x.gasLimit) * 2n).toString(); })), /summary says fees of .* but its transactions can pay/);
    assert.throws(() => read(tamper((x) => { x.orders[0]!.amounts = []; })), /orders\.0\.amounts: one amount per token/);

    // Without EIP-7702: a top-up paying the attacker instead of the deposit is refused whatever the summary says.
    await token(fx.usdc).send(depositAddress(14), usdc('2'));
    const topUps = withId(await plan([candidate(14)], { net: { ...network, eip7702: false } }));
    assert.deepEqual(kinds(topUps), ['top-up', 'token']);
    checkVerified(topUps, signOffline(topUps));
    const elsewhere = structuredClone(topUps);
    (elsewhere.transactions[0]!.payload as { to: string }).to = attacker;
    assert.throws(() => read(withId(elsewhere)), /tx-0: pays 0\.\d+ ETH to 0x0+bad0bad0, which is neither the plan's destination .* nor one of its own addresses/i);
    const otherToken = structuredClone(topUps);
    (otherToken.transactions[1]!.payload as { token: string }).token = getAddress(fx.addresses.usdt);
    assert.throws(() => read(withId(otherToken)), /tx-1: moves token .* which the plan does not list among the holdings/);

    // Signed raws: each must be its own payload signed by its own accounts.
    const signed = signOffline(p);
    const decodeSigned = (raw: string, at = batchIndex) => evmSweepVerifier.decodeSigned(p, p.transactions[at]!, raw);
    assert.equal(decodeSigned(signed[batchIndex]!.raw).txid, signed[batchIndex]!.txid);
    assert.throws(() => decodeSigned('00'), /tx-\d: the signed raw is not 0x-prefixed hex bytes/);
    assert.throws(() => decodeSigned('0x00'), /the signed raw is not an EVM transaction/);
    assert.throws(() => decodeSigned(`${signed[batchIndex]!.raw}00`), /not an EVM transaction|not in its canonical encoding/);
    assert.throws(() => decodeSigned(Transaction.from(signed[batchIndex]!.raw).unsignedSerialized), /carries no signature/);
    const keys = { payer: wallet(evmSweepSigner.deriveFeePayerKey!(seedBytes, p, 20).privateKey), deposit: wallet(evmSweepSigner.deriveKey(seedBytes, candidate(12), p, 20).privateKey) };
    // Another valid transaction of the same sender (the plan's top-up of another plan, say): another nonce and call.
    const other = Transaction.from({ type: 2, chainId: 31_337n, nonce: (batch.payload as EvmBatchPayload).nonce, gasLimit: 21_000n, maxFeePerGas: 10n ** 9n, maxPriorityFeePerGas: 1n, to: attacker, value: 1n });
    other.signature = keys.payer.signingKey.sign(other.unsignedHash);
    assert.throws(() => decodeSigned(other.serialized), /tx-\d: the signed transaction's gas limit is 21000, the plan's \d+: not this plan's transaction/);
    // The batch re-signed by a stranger, and the batch's orders pointed at the attacker and re-signed by the fee payer.
    const resign = (edit: (tx: Transaction) => void, by = keys.payer) => {
      const tx = Transaction.from(signed[batchIndex]!.raw);
      tx.signature = null;
      edit(tx);
      tx.signature = by.signingKey.sign(tx.unsignedHash);
      return tx.serialized;
    };
    assert.throws(() => decodeSigned(resign(() => {}, new Wallet(node.privateKeys[4]!))), /its signature does not verify against its sender 0x[0-9a-fA-F]{40} \(it recovers 0x/);
    // One bit of the signature's s flipped (the raw's last byte).
    const raw = signed[batchIndex]!.raw;
    const broken = `${raw.slice(0, -2)}${(Number.parseInt(raw.slice(-2), 16) ^ 1).toString(16).padStart(2, '0')}`;
    assert.throws(() => decodeSigned(broken), /its signature does not verify against its sender/);
    const orders = () => [...(SWEEPER_ABI.decodeFunctionData('sweepMany', Transaction.from(signed[batchIndex]!.raw).data)[0] as unknown[][])].map((o) => [...o]);
    const withOrders = (list: unknown[][]) => resign((tx) => { tx.data = SWEEPER_ABI.encodeFunctionData('sweepMany', [list]); });
    assert.throws(() => decodeSigned(withOrders(orders().map((o) => [o[0], attacker, ...o.slice(2)]))), /order 0 destination is 0x0+bad0bad0, the plan's 0x0+C01D/i);
    // An intent for the cold address, but signed by another key than the deposit's.
    const forgedIntent = orders();
    const typed = sweepTypedData(31_337n, depositAddress(12), cold, [getAddress(fx.addresses.usdc)], BigInt((batch.payload as EvmBatchPayload).deadline));
    const sig = new Wallet(node.privateKeys[4]!).signingKey.sign(TypedDataEncoder.hash(typed.domain, typed.types, typed.value));
    forgedIntent[0] = [...forgedIntent[0]!.slice(0, 4), sig.v, sig.r, sig.s];
    assert.throws(() => decodeSigned(withOrders(forgedIntent)), /the sweep intent of order 0 is not signed by its deposit/);
    // An authorization by another key, and one delegating to another contract.
    const auth = (tx: Transaction, fields: { address?: string; by?: Wallet }) => {
      const list = [...(tx.authorizationList ?? [])];
      const first = list[0]!;
      list[0] = (fields.by ?? keys.deposit).authorizeSync({ address: fields.address ?? first.address, nonce: first.nonce, chainId: first.chainId });
      tx.authorizationList = list;
    };
    assert.equal(Transaction.from(signed[batchIndex]!.raw).authorizationList?.length, 2);
    assert.throws(() => decodeSigned(resign((tx) => auth(tx, { by: new Wallet(node.privateKeys[4]!) }))), /authorization 0 is not signed by its deposit/);
    assert.throws(() => decodeSigned(resign((tx) => auth(tx, { address: attacker }))), /authorization 0 target is 0x0+bad0bad0, the plan's 0x/i);
    // The raw of another transaction of a plan given for this one: the fee payer's top-up for the deposit's transfer.
    const topUpsSigned = signOffline(topUps);
    assert.throws(() => evmSweepVerifier.decodeSigned(topUps, topUps.transactions[1]!, topUpsSigned[0]!.raw), /tx-1: its signature does not verify against its sender/);

    // A native transfer signed by the deposit's own key, paying the attacker instead of the cold address.
    await (await fx.payer.sendTransaction({ to: depositAddress(15), value: parseEther('0.05') })).wait();
    const native = withId(await plan([candidate(15)], { feePayer: null }));
    assert.deepEqual(kinds(native), ['native']);
    const [nativeSigned] = signOffline(native);
    const payTo = Transaction.from(nativeSigned!.raw);
    payTo.signature = null;
    payTo.to = attacker;
    payTo.signature = wallet(evmSweepSigner.deriveKey(seedBytes, candidate(15), native, 20).privateKey).signingKey.sign(payTo.unsignedHash);
    assert.throws(() => evmSweepVerifier.decodeSigned(native, native.transactions[0]!, payTo.serialized), /tx-0: the signed transaction's recipient is 0x0+bad0bad0, the plan's 0x0+C01D/i);
    assert.equal(evmSweepVerifier.decodeSigned(native, native.transactions[0]!, nativeSigned!.raw).txid, nativeSigned!.txid);
  });

  test('a stale plan is refused by the node with its message; unknown and garbage transactions are told apart', async () => {
    await (await fx.payer.sendTransaction({ to: depositAddress(10), value: parseEther('0.1') })).wait();
    const p = await plan([candidate(10)], { feePayer: null });
    assert.deepEqual(p.transactions.map((tx) => (tx.payload as { kind: string }).kind), ['native']);
    const [signed] = signOffline(p);
    // The deposit's key spends elsewhere after planning: the planned nonce is gone.
    const key = evmSweepSigner.deriveKey(seedBytes, candidate(10), p, 20);
    const owner = new Wallet(`0x${Buffer.from(key.privateKey).toString('hex')}`, node.provider);
    assert.equal(await evmSweepSender.stale!(network, config, p), null, 'fresh before the deposit moves');
    await (await owner.sendTransaction({ to: fx.addresses.other, value: parseEther('0.05') })).wait();
    assert.match((await evmSweepSender.stale!(network, config, p)) ?? '', /no longer holds the planned amount/);
    const refused = await evmSweepSender.broadcast(network, config, signed!);
    assert.equal(refused.accepted, false);
    assert.match((refused as { error: string }).error, /nonce/i);
    assert.equal((await evmSweepSender.status(network, config, signed!.txid)).state, 'unknown');
    const garbage = await evmSweepSender.broadcast(network, config, { id: 'tx-0', raw: '0x02deadbeef', txid: `0x${'11'.repeat(32)}` });
    assert.equal(garbage.accepted, false);
  });

  test('without EIP-7702 the fee payer tops each token deposit up with exactly its gas reserve, then the deposit transfers', async (t) => {
    const noSetCode = { ...network, eip7702: false };
    await token(fx.usdt).send(depositAddress(7), usdc('3'));
    await token(fx.usdc).send(depositAddress(8), usdc('2'));
    await (await fx.payer.sendTransaction({ to: depositAddress(9), value: parseEther('0.2') })).wait();
    const coldUsdtBefore = await token(fx.usdt).balance(cold);
    const p = await plan([7, 8, 9].map(candidate), { net: noSetCode });
    const kinds = p.transactions.map((tx) => `${(tx.payload as { kind: string }).kind}${tx.after.length ? `<${tx.after.join(',')}` : ''}`);
    assert.deepEqual(kinds, ['top-up', 'token<tx-0', 'top-up', 'token<tx-2', 'native']);
    const signed = signOffline(p);
    const gas = await broadcastAll(signed);
    t.diagnostic(`top-up path gas: ${p.transactions.map((tx) => `${tx.id} ${(tx.payload as { kind: string }).kind} ${gas.get(tx.id)}`).join(', ')}`);
    assert.equal(await token(fx.usdt).balance(cold), coldUsdtBefore + usdc('3'));
    for (const i of [7, 8]) {
      assert.equal(await token(fx.usdt).balance(depositAddress(i)), 0n);
      assert.equal(await token(fx.usdc).balance(depositAddress(i)), 0n);
      const left = p.deposits.find((d) => d.address === depositAddress(i))!.leftBehind[0]!;
      assert.equal(left.holding.symbol, 'ETH');
      assert.ok((await eth(depositAddress(i))) > 0n, 'the unspent gas reserve stays, and the plan says so');
    }
    const native = p.deposits.find((d) => d.address === depositAddress(9))!;
    assert.equal(BigInt(native.moves[0]!.amount) + BigInt(native.fee), parseEther('0.2'));
    assert.ok((await eth(depositAddress(9))) < BigInt(native.fee));

    // A top-up larger than the transfers after it can spend is refused by the signer.
    const greedy = structuredClone(p);
    (greedy.transactions[0]!.payload as { value: string }).value = parseEther('5').toString();
    assert.throws(() => signOffline(greedy), /more than the transfers after it can spend/);
    const elsewhere = structuredClone(p);
    (elsewhere.transactions[0]!.payload as { to: string }).to = attacker;
    assert.throws(() => signOffline(elsewhere), /not one of the plan's deposits/);
  });
});
