import { parseEther, type Wallet } from 'ethers';
import { CREATE2_DEPLOYER } from '../families/evm/sweep-payload.ts';
import type { HardhatNode } from './hardhat-node.ts';

// What every public EVM chain has and a fresh Hardhat chain lacks: the CREATE2 proxy of
// github.com/Arachnid/deterministic-deployment-proxy at 0x4e59b448…. An EIP-7702 sweep places its
// Sweeper through it (docs/sweeps/evm.md), so the devnet deploys it the way the chains got it: the
// canonical pre-EIP-155 transaction from a keyless sender, the same bytes on every chain.

export const PROXY_DEPLOYMENT_TX =
  '0xf8a58085174876e800830186a08080b853604580600e600039806000f350fe7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe03601600081602082378035828234f58015156039578182fd5b8082525050506014600cf31ba02222222222222222222222222222222222222222222222222222222222222222a02222222222222222222222222222222222222222222222222222222222222222';
/** The keyless sender of PROXY_DEPLOYMENT_TX: it needs 0.01 ETH for the transaction's gas. */
export const PROXY_DEPLOYER = '0x3fab184622dc19b6109349b94811493bf2a45362';
export const CREATE2_PROXY = CREATE2_DEPLOYER;

/** Places the proxy at CREATE2_PROXY (once; a node that has it already is left alone). */
export async function deployCreate2Proxy(node: HardhatNode, funder: Wallet): Promise<void> {
  if ((await node.provider.getCode(CREATE2_PROXY)) !== '0x') return;
  await (await funder.sendTransaction({ to: PROXY_DEPLOYER, value: parseEther('0.01') })).wait();
  const hash = await node.send<string>('eth_sendRawTransaction', [PROXY_DEPLOYMENT_TX]);
  await node.provider.waitForTransaction(hash);
  if ((await node.provider.getCode(CREATE2_PROXY)) === '0x') throw new Error(`the CREATE2 proxy is not at ${CREATE2_PROXY} after its deployment (tx ${hash})`);
}
