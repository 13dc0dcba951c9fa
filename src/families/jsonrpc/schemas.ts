import { id as keccakId } from 'ethers';
import { z } from 'zod';

// The JSON-RPC answers the EVM reader relies on, checked at the boundary (Ethereum execution API:
// eth_chainId, eth_blockNumber, eth_getBlockByNumber, eth_getLogs, eth_getTransactionReceipt; geth's
// callTracer for debug_traceBlockByNumber / debug_traceTransaction). geth, Erigon, Hardhat/EDR and
// java-tron's /jsonrpc all answer in these shapes. A node answering anything else is a retried
// fault naming the method (rpc.ts), never a TypeError and never a wrong credit.

/** The ERC-20 (and TRC-20) `Transfer(address,address,uint256)` event's topic 0. */
export const TRANSFER_TOPIC = keccakId('Transfer(address,address,uint256)');

export const quantity = z.string().regex(/^0x[0-9a-fA-F]+$/, 'a hex quantity');
export const data32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a 32-byte hex hash');
export const hexData = z.string().regex(/^0x[0-9a-fA-F]*$/, 'hex data');
export const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'a 20-byte hex address');

export const TxSchema = z.looseObject({ hash: data32, from: address, to: address.nullable().optional().transform((v) => v ?? null), value: quantity });
export const BlockSchema = z.looseObject({
  number: quantity,
  hash: data32,
  parentHash: data32,
  timestamp: quantity,
  transactions: z.array(z.union([data32, TxSchema])),
});
/** A block header as eth_getBlockByNumber(tag, false) answers it: only the number is read. */
export const BlockNumberSchema = z.looseObject({ number: quantity });
export const LogSchema = z.looseObject({
  address,
  topics: z.array(data32),
  data: hexData,
  blockNumber: quantity,
  blockHash: data32,
  transactionHash: data32,
  logIndex: quantity,
  removed: z.boolean().optional(),
});
export const LogsSchema = z.array(LogSchema);
export const ReceiptStatusSchema = z.looseObject({ status: quantity });
/** eth_getTransactionReceipt in full, as a buyer's claim reads it (src/families/evm/receipt.ts): its logs carry no block fields of their own there. */
export const ReceiptSchema = z.looseObject({
  status: quantity,
  to: address.nullable(),
  blockNumber: quantity,
  blockHash: data32,
  transactionHash: data32,
  from: address,
  logs: z.array(z.looseObject({ address, topics: z.array(data32), data: hexData, logIndex: quantity })),
});

/** One frame of geth's callTracer output (eth/tracers/native/call.go callFrame). */
export interface TraceFrame {
  type?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  value?: string | undefined;
  error?: string | undefined;
  calls?: TraceFrame[] | undefined;
}
export const TraceFrameSchema: z.ZodType<TraceFrame> = z.lazy(() =>
  z.looseObject({
    type: z.string().optional(),
    from: address.optional(),
    // CREATE frames that failed have no `to`; geth omits a zero value on some frames.
    to: address.optional(),
    value: quantity.optional(),
    error: z.string().optional(),
    calls: z.array(TraceFrameSchema).optional(),
  }),
);
/** debug_traceBlockByNumber: one {txHash, result} per transaction, in block order (txHash since geth 1.13). */
export const TraceBlockSchema = z.array(z.looseObject({ txHash: data32.optional(), result: TraceFrameSchema }));

export type RpcBlock = z.infer<typeof BlockSchema>;
export type RpcTx = z.infer<typeof TxSchema>;
export type RpcLog = z.infer<typeof LogSchema>;
export type RpcReceipt = z.infer<typeof ReceiptSchema>;
