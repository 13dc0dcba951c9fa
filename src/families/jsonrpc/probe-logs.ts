import type { ResolvedNetwork } from '../../chains/registry.ts';
import { probe } from '../probe.ts';
import { RangeTooLargeError, type Rpc } from './rpc.ts';

/** eth_getLogs over one block (the smallest range any provider accepts): "range too large" still proves the method exists. */
export async function probeGetLogs(network: ResolvedNetwork, rpc: Rpc, block: string): Promise<void> {
  await probe(network, 'eth_getLogs', () =>
    rpc.call('eth_getLogs', [{ fromBlock: block, toBlock: block, address: '0x0000000000000000000000000000000000000000' }]).catch((err: unknown) => {
      if (err instanceof RangeTooLargeError) return [];
      throw err;
    }),
  );
}
