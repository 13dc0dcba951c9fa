import type { Logger } from '../../logger.ts';
import { RpcUnsupportedError } from '../source.ts';
import { RpcGaveUpError, type Rpc } from '../jsonrpc/rpc.ts';
import { BlockNumberSchema } from '../jsonrpc/schemas.ts';

// The `finalized` block tag (eth_getBlockByNumber("finalized", false)). Nodes that cannot answer it
// say so in different ways: -32601/-32602 (method or tag unknown: RpcUnsupportedError), geth's
// -32000 "finalized block not found" before the beacon client has reported finality, or a null
// result. None of these gets better by retrying at start-up, so the probe is bounded and each of
// them means "complete on the confirmation count alone".

/** Attempts of the start-up probe: a few transport faults are tolerated, never an endless retry. */
export const FINALIZED_PROBE_ATTEMPTS = 4;
/** Attempts per tick: a node that stops answering the tag must not stall the tick. */
export const FINALIZED_TICK_ATTEMPTS = 3;

export type FinalizedProbe = { served: true; finalized: bigint } | { served: false; reason: string };

/**
 * Asks for the finalized block at start-up. Transport faults and malformed answers are retried a
 * bounded number of times and then thrown (the indexer does not start on a node it cannot read);
 * every answer the node gives that means "no such tag here" is `served: false`.
 */
export async function probeFinalized(rpc: Rpc): Promise<FinalizedProbe> {
  try {
    const block = await rpc.call('eth_getBlockByNumber', ['finalized', false], { allowNull: true, schema: BlockNumberSchema, maxAttempts: FINALIZED_PROBE_ATTEMPTS });
    if (block) return { served: true, finalized: BigInt(block.number) };
    return { served: false, reason: 'the node answered null' };
  } catch (err) {
    if (err instanceof RpcUnsupportedError) return { served: false, reason: err.message };
    // The node itself answered with a JSON-RPC error (geth: -32000 "finalized block not found").
    if (err instanceof RpcGaveUpError && err.code !== undefined) return { served: false, reason: err.message };
    throw err;
  }
}

/**
 * The finalized height each tick, never lower than one seen before (finality does not go back).
 * A tick whose read fails (the node answers an error, faults or a malformed body a few times in a
 * row) keeps the last known height: completion goes on waiting for finality rather than falling
 * back to the count, and the tick is not held up.
 */
export function finalizedReader(rpc: Rpc, log: Logger, atStart: bigint): () => Promise<bigint> {
  let last = atStart;
  return async () => {
    try {
      const block = await rpc.call('eth_getBlockByNumber', ['finalized', false], { allowNull: true, schema: BlockNumberSchema, maxAttempts: FINALIZED_TICK_ATTEMPTS });
      if (block && BigInt(block.number) > last) last = BigInt(block.number);
      else if (!block) log.warn({ finalized: last.toString() }, 'the node answered null for the finalized block; keeping the last known one');
    } catch (err) {
      if (!(err instanceof RpcGaveUpError) && !(err instanceof RpcUnsupportedError)) throw err;
      log.warn({ finalized: last.toString(), error: err.message.slice(0, 200) }, 'could not read the finalized block; keeping the last known one');
    }
    return last;
  };
}
