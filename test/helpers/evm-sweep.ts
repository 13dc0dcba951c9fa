import assert from 'node:assert/strict';
import { type Contract, HDNodeWallet, Mnemonic, parseEther } from 'ethers';
import type { ResolvedNetwork } from '../../src/chains/registry.ts';
import { loadConfig } from '../../src/config/load-config.ts';
import type { Config } from '../../src/config/schema.ts';
import type { EvmFixtures } from '../../src/devnet/evm-fixtures.ts';
import type { HardhatNode } from '../../src/devnet/hardhat-node.ts';
import { CREATE2_DEPLOYER } from '../../src/families/evm/sweep-payload.ts';
import { evmSweepSender } from '../../src/families/evm/sweep-send.ts';
import { evmSweepSigner } from '../../src/families/evm/sweep-sign.ts';
import { resolveChains } from '../../src/families/families.ts';
import { keyFingerprint } from '../../src/families/key-material.ts';
import type { SignedSweepTx, SweepCandidate, SweepKey, SweepPlan } from '../../src/families/sweep.ts';

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

/** What `chaingate sweep sign` does with the family's signer: derive every key, then sign. */
export function signOffline(plan: SweepPlan): SignedSweepTx[] {
  const keys = new Map<string, SweepKey>();
  for (const d of plan.deposits) keys.set(d.address, evmSweepSigner.deriveKey(seedBytes, d, plan, 20));
  if (plan.feePayer !== null && evmSweepSigner.deriveFeePayerKey) keys.set(plan.feePayer, evmSweepSigner.deriveFeePayerKey(seedBytes, plan, 20));
  return evmSweepSigner.sign(plan, keys);
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
