import { zeroPadValue } from 'ethers';
import { LogsSchema, quantity, TRANSFER_TOPIC } from '../jsonrpc/schemas.ts';
import { RangeTooLargeError, type Rpc } from '../jsonrpc/rpc.ts';
import { assertLinked, ReorgDuringFetch, type BlockRef, type ChainSource, type SeenTransfer } from '../source.ts';
import { hex41ToTron, hexToTron, tronToHex } from './address.ts';
import { AssetTransferValueSchema, TransferValueSchema, TronApiError, type JavaTronApi, type TronBlock } from './java-tron-api.ts';

// Tron from two faces of one java-tron node (TronGrid serves both):
// - its HTTP API for blocks: only there is a TRX TransferContract told apart from a TRC-10
//   TransferAssetContract or a resource delegation (its /jsonrpc renders all of them as a `value`
//   sent to `to`), and only there is each transaction's result (`ret[0].contractRet`);
// - its Ethereum-compatible /jsonrpc for TRC-20 `Transfer` logs (eth_getLogs), the block headers
//   the reorg check compares, and the chain id.
// Addresses are Tron's base58check `T…` form (0x41 + 20 bytes) everywhere outside this reader;
// transaction hashes are Tron's 64 hex digits without 0x, as Tronscan and TronGrid show them.

/** eth_chainId of each Tron network (the low 4 bytes of its genesis block id). */
export const TRON_CHAIN_IDS: Readonly<Record<string, bigint>> = {
  MAINNET: 0x2b6653dcn,
  NILE: 0xcd8690dcn,
};

/** java-tron caps the addresses of one eth_getLogs topic at 1000. */
export const TRON_MAX_LOG_ADDRESSES = 1000;

const strip0x = (h: string) => h.replace(/^0x/i, '').toLowerCase();

function toRef(b: TronBlock): BlockRef {
  return {
    number: b.block_header.raw_data.number,
    hash: b.blockID.toLowerCase(),
    parentHash: b.block_header.raw_data.parentHash.toLowerCase(),
    timestamp: Number(b.block_header.raw_data.timestamp / 1000n),
  };
}

/** A TRC-10 token as the ledger sees it: never the registry's coin, so recorded and never credited. */
export function trc10Token(assetName: string): string {
  const id = /^[0-9a-fA-F]+$/.test(assetName) && assetName.length % 2 === 0 ? Buffer.from(assetName, 'hex').toString('utf8') : assetName;
  return `TRC10:${id}`;
}

/** protocol.Transaction.Result.contractResult's zero value, which java-tron's JSON leaves out. */
const NO_RESULT = 'DEFAULT';

/** Credited only on an explicit SUCCESS; anything else is recorded as reverted with java-tron's word for it. */
function outcome(contractRet: string): Pick<SeenTransfer, 'reverted' | 'revertReason'> {
  if (contractRet === 'SUCCESS') return { reverted: false };
  return { reverted: true, revertReason: contractRet === NO_RESULT ? 'java-tron reports no contract result (contractRet missing)' : `java-tron contractRet ${contractRet}` };
}

export interface TronSourceOptions {
  api: JavaTronApi;
  rpc: Rpc;
  /** Deposit addresses per eth_getLogs topic list (capped at java-tron's 1000). */
  addressChunk: number;
  /** Complete on the solidified block (java-tron's finality), with the confirmation count as a floor. */
  finality: boolean;
}

export function createTronSource(options: TronSourceOptions): ChainSource {
  const { api, rpc } = options;
  const chunk = Math.min(options.addressChunk, TRON_MAX_LOG_ADDRESSES);

  async function getLogs(filter: Record<string, unknown>, from: bigint, to: bigint): Promise<import('zod').infer<typeof LogsSchema>> {
    try {
      return await rpc.call('eth_getLogs', [{ ...filter, fromBlock: `0x${from.toString(16)}`, toBlock: `0x${to.toString(16)}` }], { schema: LogsSchema });
    } catch (err) {
      if (!(err instanceof RangeTooLargeError) || from === to) throw err;
      const mid = from + (to - from) / 2n;
      return [...(await getLogs(filter, from, mid)), ...(await getLogs(filter, mid + 1n, to))];
    }
  }

  return {
    async head() {
      return BigInt(await rpc.call('eth_blockNumber', [], { schema: quantity }));
    },

    async blockAt(n) {
      const b = await api.block(n);
      return b ? toRef(b) : null;
    },

    async finalized() {
      return options.finality ? api.solidified() : null;
    },

    async fetchRange(from, to, watch) {
      const blocks = await api.blocks(from, to);
      const refs = blocks.map(toRef);
      assertLinked(refs);
      const through = refs.at(-1)?.number ?? from - 1n;
      const byNumber = new Map(refs.map((r) => [r.number, r]));
      const watched = new Map<string, string>(); // 41-hex (lower case) -> T-address as the pool stores it
      for (const a of watch.addresses) {
        const hex = tronToHex(a);
        if (hex) watched.set(`41${hex.slice(2).toLowerCase()}`, a);
      }
      const results = new Map<string, string>();
      const transfers: SeenTransfer[] = [];

      for (const block of blocks) {
        const ref = byNumber.get(block.block_header.raw_data.number)!;
        for (const tx of block.transactions ?? []) {
          const txHash = tx.txID.toLowerCase();
          // Only an explicit SUCCESS credits. protobuf JSON omits the zero value, so a missing
          // contractRet is DEFAULT (no result recorded), which is not proof the transfer happened.
          const result = tx.ret?.[0]?.contractRet ?? NO_RESULT;
          results.set(txHash, result);
          const contract = tx.raw_data.contract[0]!;
          let value: { amount: string; owner_address: string; to_address: string } | null = null;
          let token: string | null = null;
          if (contract.type === 'TransferContract') {
            const parsed = TransferValueSchema.safeParse(contract.parameter.value);
            if (!parsed.success) throw new TronApiError(`malformed answer to /wallet/getblockbylimitnext: transaction ${txHash}: TransferContract value`);
            value = parsed.data;
          } else if (contract.type === 'TransferAssetContract') {
            const parsed = AssetTransferValueSchema.safeParse(contract.parameter.value);
            if (!parsed.success) throw new TronApiError(`malformed answer to /wallet/getblockbylimitnext: transaction ${txHash}: TransferAssetContract value`);
            value = parsed.data;
            token = trc10Token(parsed.data.asset_name);
          }
          // Freeze, unfreeze and delegation with a receiver move no TRX into the receiver's balance:
          // not transfers, not seen. Contract calls move TRX as call_value to contracts, never to
          // a deposit (an account), and TRC-20 tokens arrive as logs below.
          if (!value) continue;
          const to = watched.get(value.to_address.toLowerCase());
          if (!to) continue;
          transfers.push({
            txHash,
            logIndex: -1,
            blockNumber: ref.number,
            blockHash: ref.hash,
            blockTime: ref.timestamp,
            from: hex41ToTron(value.owner_address),
            to,
            token,
            amount: BigInt(value.amount),
            kind: token ? 'token' : 'native',
            ...outcome(result),
          });
        }
      }

      // TRC-20 Transfer logs to watched addresses, from any contract (look-alikes are recorded, never credited).
      const padded = [...watched.keys()].map((h) => zeroPadValue(`0x${h.slice(2)}`, 32));
      const chunks = Math.ceil(padded.length / chunk);
      const filters = chunks > 4 ? [{ topics: [TRANSFER_TOPIC] }] : Array.from({ length: chunks }, (_, i) => ({ topics: [TRANSFER_TOPIC, null, padded.slice(i * chunk, (i + 1) * chunk)] }));
      for (const filter of through >= from ? filters : []) {
        for (const log of await getLogs(filter, from, through)) {
          if (log.removed || log.topics.length !== 3 || log.data.length !== 66) continue;
          const to = watched.get(`41${log.topics[2]!.slice(-40).toLowerCase()}`);
          if (!to) continue;
          const ref = byNumber.get(BigInt(log.blockNumber));
          if (!ref || ref.hash !== strip0x(log.blockHash)) throw new ReorgDuringFetch(`log in block ${BigInt(log.blockNumber)} has another hash than the block read`);
          const txHash = strip0x(log.transactionHash);
          const result = results.get(txHash);
          if (result === undefined) throw new ReorgDuringFetch(`log of transaction ${txHash} that block ${ref.number} does not hold`);
          transfers.push({
            txHash,
            logIndex: Number(BigInt(log.logIndex)),
            blockNumber: ref.number,
            blockHash: ref.hash,
            blockTime: ref.timestamp,
            from: hexToTron(`0x${log.topics[1]!.slice(-40)}`),
            to,
            token: hexToTron(log.address),
            amount: BigInt(log.data),
            kind: 'token',
            // OUT_OF_ENERGY, REVERT, …: the transfer did not happen, whatever the log says.
            ...outcome(result),
          });
        }
      }
      return { blocks: refs, transfers, ...(through < to ? { through } : {}) };
    },

    close: () => rpc.close(),
  };
}
