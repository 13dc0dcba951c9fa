import type { BlockRef } from '../source.ts';
import { hex } from './raw-address.ts';
import { PAGE, TonApiError, type TonBlock, type ToncenterV3 } from './toncenter-v3.ts';

// The masterchain blocks of a range of seqnos, linked by seqno, in one call per 1,000 blocks:
// exact block times for every height, and the stored tip re-checked like any chain's.
//
// The lookup is anchored at the block before the range (its time bounds the query from below; the
// walk stops at the first block past the range). When the API does not have that block:
// - below the oldest block it holds (a fresh index): the range starts at that oldest block, the
//   heights before it have nothing to read;
// - anywhere else: the API is missing a block it should hold — a fault, retried with back-off,
//   never a walk over the whole history.

export interface MasterchainRange {
  /** The range's blocks from its first readable height, consecutive; may stop short of `to`. */
  blocks: BlockRef[];
  /** The time the range's transactions can be no older than (the anchor block's). */
  since: number;
}

const refOf = (b: TonBlock, parent: TonBlock | undefined): BlockRef => ({
  number: BigInt(b.seqno),
  hash: hex(b.root_hash),
  parentHash: parent ? hex(parent.root_hash) : '',
  timestamp: b.gen_utime,
});

/** The block before `from`, or the API's oldest block when `from` lies before it; null when the whole range does. */
async function anchorOf(api: ToncenterV3, from: bigint, to: bigint): Promise<{ block: TonBlock; inRange: boolean } | null> {
  const prev = from > 0n ? await api.masterchainBlock(from - 1n) : null;
  if (prev) return { block: prev, inRange: false };
  const { first, last } = await api.masterchainInfo();
  if (!first) throw new TonApiError(`/api/v3/blocks: masterchain block ${from - 1n} is missing and /api/v3/masterchainInfo names no first block`);
  const oldest = BigInt(first.seqno);
  if (oldest > to) return null;
  if (oldest >= from) return { block: first, inRange: true };
  throw new TonApiError(`/api/v3/blocks: masterchain block ${from - 1n} is missing, though the API holds ${oldest}..${last.seqno}`);
}

export async function readMasterchainRange(api: ToncenterV3, from: bigint, to: bigint): Promise<MasterchainRange | 'before-history'> {
  const anchor = await anchorOf(api, from, to);
  if (!anchor) return 'before-history';
  const start = anchor.inRange ? BigInt(anchor.block.seqno) : from;
  const bySeqno = new Map<bigint, TonBlock>([[BigInt(anchor.block.seqno), anchor.block]]);
  let newest = BigInt(anchor.block.seqno);
  for (let offset = 0; ; offset += PAGE) {
    const page = await api.masterchainBlocks(anchor.block.gen_utime, offset);
    for (const b of page) {
      const n = BigInt(b.seqno);
      if (n > newest) newest = n;
      if (n >= start && n <= to) bySeqno.set(n, b);
    }
    if (bySeqno.has(to) || newest > to || page.length < PAGE) break;
  }
  const blocks: BlockRef[] = [];
  for (let n = start; n <= to; n++) {
    const b = bySeqno.get(n);
    if (!b) {
      // Not indexed yet: read up to here, the rest next poll. A gap before blocks the API does hold is a fault.
      if (newest > n) throw new TonApiError(`/api/v3/blocks: masterchain block ${n} is missing, though the API holds ${newest}`);
      break;
    }
    blocks.push(refOf(b, bySeqno.get(n - 1n)));
  }
  return { blocks, since: anchor.block.gen_utime };
}
