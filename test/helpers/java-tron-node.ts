import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLocal } from './local-server.ts';
import type { HardhatNode } from '../../src/devnet/hardhat-node.ts';
import { MAINNET_GENESIS } from './tron-fixtures.ts';

// A local java-tron: the two faces a Tron indexer reads, over one real chain. /jsonrpc is a Hardhat
// node with Tron's chain id (the Ethereum-compatible API java-tron serves there, with real EVM
// execution of TRC-20 transfers and their logs); the HTTP API (/wallet/*, /walletsolidity/*)
// renders the same blocks as java-tron's JsonFormat does (visible=false). EVM value transfers
// become TransferContract and calls TriggerSmartContract, with ret[0].contractRet from the receipt.
// Tron-only transactions (TRC-10, resource delegation, freezes: tron-fixtures.ts) are added to a
// block with inject(); a transaction's result can be overwritten (OUT_OF_ENERGY) with setResult().

interface EvmTx {
  hash: string;
  from: string;
  to: string | null;
  value: string;
  input: string;
}

interface EvmBlock {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
  transactionsRoot: string;
  miner: string;
  transactions: EvmTx[];
}

export interface JavaTronNode {
  /** Base of the HTTP API; the JSON-RPC is at `${url}/jsonrpc`. */
  url: string;
  inject(blockNumber: bigint, tx: Record<string, unknown>): void;
  setResult(txHash: string, contractRet: string): void;
  /** Blocks behind the head that /walletsolidity/getnowblock answers. */
  setSolidLag(blocks: number): void;
  /** Every TRON-PRO-API-KEY header received (HTTP API and /jsonrpc alike). */
  apiKeys: string[];
  /** Requests per path that came without a TRON-PRO-API-KEY header. */
  keyless: Record<string, number>;
  calls: Record<string, number>;
  close(): Promise<void>;
}

const bare = (h: string) => h.replace(/^0x/, '').toLowerCase();
const to41 = (a: string) => `41${bare(a)}`;

export async function startJavaTronNode(node: HardhatNode, options: { solidLag?: number } = {}): Promise<JavaTronNode> {
  const injected = new Map<bigint, Record<string, unknown>[]>();
  const results = new Map<string, string>();
  const apiKeys: string[] = [];
  const keyless: Record<string, number> = {};
  const calls: Record<string, number> = {};
  let solidLag = options.solidLag ?? 0;
  const target = new URL(node.url);

  async function block(n: bigint): Promise<Record<string, unknown> | null> {
    if (n === 0n) return MAINNET_GENESIS;
    const b = await node.send<EvmBlock | null>('eth_getBlockByNumber', [`0x${n.toString(16)}`, true]);
    if (!b) return null;
    const transactions: Record<string, unknown>[] = [];
    for (const tx of b.transactions) {
      const receipt = await node.send<{ status: string }>('eth_getTransactionReceipt', [tx.hash]);
      const plainValue = tx.input === '0x' && tx.to !== null;
      const contract = plainValue
        ? {
            parameter: { value: { amount: Number(BigInt(tx.value)), owner_address: to41(tx.from), to_address: to41(tx.to!) }, type_url: 'type.googleapis.com/protocol.TransferContract' },
            type: 'TransferContract',
          }
        : {
            parameter: {
              value: { data: bare(tx.input), owner_address: to41(tx.from), contract_address: to41(tx.to ?? '0x0000000000000000000000000000000000000000'), ...(BigInt(tx.value) > 0n ? { call_value: Number(BigInt(tx.value)) } : {}) },
              type_url: 'type.googleapis.com/protocol.TriggerSmartContract',
            },
            type: 'TriggerSmartContract',
          };
      transactions.push({
        ret: [{ contractRet: results.get(bare(tx.hash)) ?? (BigInt(receipt.status) === 1n ? 'SUCCESS' : 'REVERT') }],
        signature: [`${'0'.repeat(128)}1b`],
        txID: bare(tx.hash),
        raw_data: {
          contract: [contract],
          ref_block_bytes: bare(b.number).padStart(4, '0').slice(-4),
          ref_block_hash: bare(b.parentHash).slice(16, 32),
          expiration: Number(BigInt(b.timestamp)) * 1000 + 60_000,
          ...(plainValue ? {} : { fee_limit: 150_000_000 }),
          timestamp: Number(BigInt(b.timestamp)) * 1000,
        },
        raw_data_hex: '0a02',
      });
    }
    transactions.push(...(injected.get(n) ?? []));
    const raw: Record<string, unknown> = {
      number: Number(n),
      txTrieRoot: bare(b.transactionsRoot),
      witness_address: to41(b.miner),
      parentHash: bare(b.parentHash),
      version: 32,
      timestamp: Number(BigInt(b.timestamp)) * 1000,
    };
    // protobuf JSON omits empty repeated fields: a block without transactions has no `transactions`.
    return { blockID: bare(b.hash), block_header: { raw_data: raw, witness_signature: '00'.repeat(65) }, ...(transactions.length ? { transactions } : {}) };
  }

  async function head(): Promise<bigint> {
    return BigInt(await node.send<string>('eth_blockNumber', []));
  }

  async function answer(path: string, body: Record<string, unknown>): Promise<unknown> {
    switch (path) {
      case '/wallet/getnowblock':
        return block(await head());
      case '/walletsolidity/getnowblock': {
        const h = await head();
        return block(h > BigInt(solidLag) ? h - BigInt(solidLag) : 0n);
      }
      case '/wallet/getblockbynum':
        if (typeof body.num !== 'number') return { Error: 'class org.tron.core.services.http.JsonFormat$ParseException : num' };
        return (await block(BigInt(body.num))) ?? {};
      case '/wallet/getblockbylimitnext': {
        const start = BigInt(Number(body.startNum));
        const end = BigInt(Number(body.endNum));
        if (end <= start || end - start > 100n) return {}; // java-tron answers nothing outside 0 < end - start <= 100
        const h = await head();
        const blocks: unknown[] = [];
        for (let n = start; n < end && n <= h; n++) blocks.push(await block(n));
        return blocks.length ? { block: blocks } : {};
      }
      default:
        return null;
    }
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const path = (req.url ?? '/').split('?')[0]!;
      calls[path] = (calls[path] ?? 0) + 1;
      const key = req.headers['tron-pro-api-key'];
      if (typeof key === 'string') apiKeys.push(key);
      else keyless[path] = (keyless[path] ?? 0) + 1;
      if (path === '/jsonrpc') {
        const up = httpRequest({ host: target.hostname, port: target.port, path: '/', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': raw.length } }, (r) => {
          res.writeHead(r.statusCode ?? 502, { 'content-type': 'application/json' });
          r.pipe(res);
        });
        up.on('error', () => res.destroy());
        up.end(raw);
        return;
      }
      let body: Record<string, unknown> = {};
      try {
        body = raw.length ? (JSON.parse(raw.toString()) as Record<string, unknown>) : {};
      } catch {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ Error: 'class com.alibaba.fastjson.JSONException : syntax error' }));
        return;
      }
      answer(path, body).then(
        (out) => {
          if (out === null) res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body><h2>404 Not found</h2></body></html>');
          else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
        },
        (err: unknown) => res.writeHead(500).end(String(err)),
      );
    });
  });
  const local = await listenLocal(server);
  return {
    url: local.url,
    inject(blockNumber, tx) {
      injected.set(blockNumber, [...(injected.get(blockNumber) ?? []), tx]);
    },
    setResult(txHash, contractRet) {
      results.set(bare(txHash), contractRet);
    },
    setSolidLag(blocks) {
      solidLag = blocks;
    },
    apiKeys,
    keyless,
    calls,
    close: local.close,
  };
}
