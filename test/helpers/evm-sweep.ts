import assert from 'node:assert/strict';
import { type Contract, getAddress, HDNodeWallet, keccak256, Mnemonic, parseEther, Transaction } from 'ethers';
import type { ResolvedNetwork } from '../../src/chains/registry.ts';
import { loadConfig } from '../../src/config/load-config.ts';
import type { Config } from '../../src/config/schema.ts';
import type { EvmFixtures } from '../../src/devnet/evm-fixtures.ts';
import type { HardhatNode } from '../../src/devnet/hardhat-node.ts';
import { CREATE2_DEPLOYER, ERC20_ABI, type EvmSweepPayload, SWEEPER_ABI, SWEEPER_ADDRESS } from '../../src/families/evm/sweep-payload.ts';
import { evmSweepSender } from '../../src/families/evm/sweep-send.ts';
import { evmSweepSigner } from '../../src/families/evm/sweep-sign.ts';
import { evmSweepVerifier } from '../../src/families/evm/sweep-verify.ts';
import { resolveChains } from '../../src/families/families.ts';
import { keyFingerprint } from '../../src/families/key-material.ts';
import type { DecodedSweepTx, SignedSweepTx, SweepCandidate, SweepKey, SweepPlan } from '../../src/families/sweep.ts';
import { checkDecoded } from '../../src/sweep/check-decoded.ts';

// The EVM family's sweep and refund modules on a Hardhat node (sweep-evm.test.ts, refund-evm.test.ts):
// a test wallet, the ethereum testnet as a DEVNET over the node, and what `sweep sign` and
// `sweep broadcast` do with the family's signer and sender.

/** BIP39's own test vector phrase: a seed whose addresses hold nothing on the Hardhat chain. */
export const TEST_PHRASE = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
const seed = Mnemonic.fromPhrase(TEST_PHRASE).computeSeed();
export const seedBytes = Buffer.from(seed.slice(2), 'hex');
/** The pool's account m/44'/60'/0' and its key fingerprint (the plan's `source`). */
export const accountNode = HDNodeWallet.fromSeed(seed).derivePath("m/44'/60'/0'");
export const source = keyFingerprint(accountNode.neuter().extendedKey);
export const depositAddress = (i: number) => accountNode.deriveChild(0).deriveChild(i).address;
/** The fee payer: the account's first change address (sweep-sign.ts looks there). */
export const feePayer = accountNode.deriveChild(1).deriveChild(0).address;

export function candidate(i: number): SweepCandidate {
  return { address: depositAddress(i), derivationIndex: i, source };
}

/**
 * The canonical deployment of github.com/Arachnid/deterministic-deployment-proxy: a pre-EIP-155
 * transaction from a keyless sender, the same on every chain, which places the CREATE2 proxy.
 */
export const PROXY_DEPLOYMENT_TX =
  '0xf8a58085174876e800830186a08080b853604580600e600039806000f350fe7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe03601600081602082378035828234f58015156039578182fd5b8082525050506014600cf31ba02222222222222222222222222222222222222222222222222222222222222222a02222222222222222222222222222222222222222222222222222222222222222';
export const PROXY_DEPLOYER = '0x3fab184622dc19b6109349b94811493bf2a45362';

/** The chain as every public EVM chain has it: the CREATE2 proxy in place, and the test fee payer funded with 10 ETH. */
export async function prepareSweepChain(node: HardhatNode, fx: EvmFixtures): Promise<{ config: Config; network: ResolvedNetwork }> {
  await (await fx.deployer.sendTransaction({ to: PROXY_DEPLOYER, value: parseEther('0.01') })).wait();
  await node.send('eth_sendRawTransaction', [PROXY_DEPLOYMENT_TX]);
  assert.notEqual(await node.provider.getCode(CREATE2_DEPLOYER), '0x');
  await (await fx.deployer.sendTransaction({ to: feePayer, value: parseEther('10') })).wait();
  const chains = {
    ethereum: {
      testnet: {
        network: 'DEVNET',
        rpcUrl: node.url,
        confirmations: 1,
        tokens: { USDC: { address: fx.addresses.usdc, decimals: 6 }, USDT: { address: fx.addresses.usdt, decimals: 6 } },
      },
    },
  };
  const config = loadConfig({ env: {}, overrides: { chains, log: { level: 'silent' } } }).config;
  return { config, network: resolveChains(config.chains as never).chains.ethereum.testnet };
}

/**
 * What `chaingate sweep sign` does with the family's signer: derive every key, then sign. Every plan
 * the signer accepts is also read by the verifier (checkVerified), so each plan shape the tests make
 * is checked against its bytes.
 */
export function signOffline(plan: SweepPlan): SignedSweepTx[] {
  const keys = new Map<string, SweepKey>();
  for (const d of plan.deposits) keys.set(d.address, evmSweepSigner.deriveKey(seedBytes, d, plan, 20));
  if (plan.feePayer !== null && evmSweepSigner.deriveFeePayerKey) keys.set(plan.feePayer, evmSweepSigner.deriveFeePayerKey(seedBytes, plan, 20));
  const signed = evmSweepSigner.sign(plan, keys);
  checkVerified(plan, signed);
  return signed;
}

/**
 * The verifier on a plan and its signed file: the payloads read as the plan's summary says
 * (checkDecoded, default fee bounds), each signed raw reads exactly as its payload, hashes to the
 * txid the signer wrote, and agrees with ethers' own decoding of the raw (recipients, tokens,
 * amounts, sender, fee bound, chain id). Returns what the payloads read.
 */
export function checkVerified(plan: SweepPlan, signed: SignedSweepTx[]): DecodedSweepTx[] {
  const decoded = plan.transactions.map((t) => evmSweepVerifier.decodeUnsigned(plan, t));
  checkDecoded(plan, decoded, { maxFee: null });
  assert.deepEqual(signed.map((s) => s.id), plan.transactions.map((t) => t.id));
  signed.forEach((s, i) => {
    const tx = plan.transactions[i]!;
    const read = evmSweepVerifier.decodeSigned(plan, tx, s.raw);
    assert.deepEqual(read, { ...decoded[i], txid: s.txid }, `${s.id}: the signed raw reads as its payload`);
    assert.equal(s.txid, keccak256(s.raw));
    assert.deepEqual(independentRead(s.raw, tx.payload as EvmSweepPayload), {
      spends: read.spends,
      pays: read.pays.map((p) => ({ to: p.to, token: p.token, amount: p.amount })),
      fee: read.fee,
      chainId: read.chainId,
      hash: read.txid,
    });
  });
  return decoded;
}

/** A signed raw read with ethers alone (Transaction.from and the ABIs), not through sweep-verify.ts. */
function independentRead(raw: string, payload: EvmSweepPayload) {
  const tx = Transaction.from(raw);
  const head = { fee: tx.gasLimit * tx.maxFeePerGas!, chainId: tx.chainId.toString(), hash: tx.hash };
  if (tx.to === SWEEPER_ADDRESS && payload.kind === '7702-batch') {
    const [orders] = SWEEPER_ABI.decodeFunctionData('sweepMany', tx.data) as unknown as [{ deposit: string; to: string; tokens: string[] }[]];
    // The Sweeper moves whole balances: the amounts are the payload's, the rest is the raw's.
    const pays = [...orders].flatMap((o, i) => {
      const planned = payload.orders[i]!;
      return [
        ...(BigInt(planned.native) > 0n ? [{ to: o.to, token: null, amount: BigInt(planned.native) }] : []),
        ...[...o.tokens].map((t, j) => ({ to: o.to, token: t, amount: BigInt(planned.amounts[j]!) })),
      ];
    });
    return { ...head, spends: [tx.from!, ...[...orders].map((o) => o.deposit)], pays };
  }
  if (tx.to === CREATE2_DEPLOYER) return { ...head, spends: [tx.from!], pays: [] };
  if (tx.data !== '0x') {
    const [to, amount] = ERC20_ABI.decodeFunctionData('transfer', tx.data) as unknown as [string, bigint];
    return { ...head, spends: [tx.from!], pays: [{ to, token: getAddress(tx.to!), amount }] };
  }
  return { ...head, spends: [tx.from!], pays: [{ to: tx.to!, token: null, amount: tx.value }] };
}

/** What `chaingate sweep broadcast` does: send each in order, each after the ones it waits for are final; the gas each used. */
export async function broadcastAll(chain: { node: HardhatNode; network: ResolvedNetwork; config: Config }, signed: SignedSweepTx[]): Promise<Map<string, bigint>> {
  const { node, network, config } = chain;
  const gasUsed = new Map<string, bigint>();
  for (const tx of signed) {
    assert.deepEqual(await evmSweepSender.broadcast(network, config, tx), { accepted: true }, `${tx.id} accepted`);
    // Sending the same raw again is harmless.
    assert.deepEqual(await evmSweepSender.broadcast(network, config, tx), { accepted: true }, `${tx.id} accepted twice`);
    const status = await evmSweepSender.status(network, config, tx.txid);
    assert.equal(status.state, 'final', `${tx.id}: ${JSON.stringify(status)}`);
    const receipt = await node.provider.getTransactionReceipt(tx.txid);
    assert.equal(receipt?.hash, tx.txid, `${tx.id}: the chain knows it by the txid the signer wrote`);
    gasUsed.set(tx.id, receipt?.gasUsed ?? 0n);
  }
  return gasUsed;
}

/** A fixture token: balances, and sends from the fixtures' payer. */
export function token(fx: EvmFixtures, c: Contract) {
  return {
    balance: async (a: string) => (await c.getFunction('balanceOf')(a)) as bigint,
    send: async (to: string, amount: bigint) => await (await (c.connect(fx.payer) as Contract).getFunction('transfer')(to, amount)).wait(),
  };
}
