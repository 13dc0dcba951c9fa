import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import * as bitcoin from 'bitcoinjs-lib';
import * as ecc from '@bitcoinerlab/secp256k1';
import { listenLocal } from './local-server.ts';

// Payouts to bcrt1p… (taproot) addresses need bitcoinjs-lib's ECC library in this (the test's)
// process. The indexer under test runs in its own process and reads outputs without one.
bitcoin.initEccLib(ecc);

// A regtest bitcoin chain behind two real protocols: the Esplora REST API (mempool.space,
// Blockstream, electrs) and Bitcoin Core's JSON-RPC (POST /, Basic auth, {"result","error","id"}
// with HTTP 500 on an RPC error, as bitcoind answers JSON-RPC 1.0 requests). Blocks are real
// serialized blocks built with bitcoinjs-lib and mined for real against regtest's target (0x207fffff,
// about two hashes a block); signatures are absent (nothing here validates scripts). Invalid blocks
// (a wrong merkle root, no proof of work, bits the chain does not demand) can be mined on purpose.
// Real transactions (MAINNET_TAPROOT_TX) can be mined too: a block with witnesses gets the BIP141
// witness commitment in its coinbase, as a real miner's does.

/** Bitcoin Core's regtest genesis block header (src/kernel/chainparams.cpp CRegTestParams). */
const GENESIS_HEADER =
  '0100000000000000000000000000000000000000000000000000000000000000000000003ba3edfd7a7b12b27ac72c3e67768f617fc81bc3888a51323a9fb8aa4b1e5e4adae5494dffff7f2002000000';

interface SimBlock {
  hash: string;
  header: string;
  raw: Buffer | null;
  timestamp: number;
}

export interface Payout {
  address: string;
  sats: bigint;
}

export interface EsploraSim {
  url: string;
  height(): number;
  /**
   * Mines one block; each inner list becomes one transaction paying those outputs, and a Transaction
   * goes in as it is (a real one, signatures and all). Returns the txids.
   */
  mine(txs?: Array<Payout[] | bitcoin.Transaction>, flaw?: 'merkle' | 'pow' | 'bits'): string[];
  mineEmpty(count: number): void;
  /** Drops the top `depth` blocks (a reorg; mine again to build the competing branch). */
  rewind(depth: number): void;
  setFaultRate(rate: number): void;
  stats: { requests: number; faults: number };
  close(): Promise<void>;
}

export async function startEsploraSim(options: { seed?: number; rpcAuth?: { user: string; password: string } } = {}): Promise<EsploraSim> {
  const network = bitcoin.networks.regtest;
  const genesis = bitcoin.Block.fromHex(GENESIS_HEADER);
  const chain: SimBlock[] = [{ hash: genesis.getId(), header: GENESIS_HEADER, raw: null, timestamp: genesis.timestamp }];
  let faultRate = 0;
  let seed = options.seed ?? 1;
  const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const stats = { requests: 0, faults: 0 };

  function coinbase(height: number): bitcoin.Transaction {
    const tx = new bitcoin.Transaction();
    tx.addInput(new Uint8Array(32), 0xffffffff, 0xffffffff, Uint8Array.from([3, height & 0xff, (height >> 8) & 0xff, (height >> 16) & 0xff, ...randomBytes(4)]));
    // The miner's reward goes to an address nobody seeds into a pool.
    tx.addOutput(bitcoin.payments.p2wpkh({ hash: new Uint8Array(20).fill(7) }).output!, 312_500_000n);
    return tx;
  }

  function mine(txs: Array<Payout[] | bitcoin.Transaction> = [], flaw?: 'merkle' | 'pow' | 'bits'): string[] {
    const prev = chain[chain.length - 1]!;
    const height = chain.length;
    const transactions = [coinbase(height)];
    for (const item of txs) {
      if (item instanceof bitcoin.Transaction) {
        transactions.push(item);
        continue;
      }
      const tx = new bitcoin.Transaction();
      tx.addInput(randomBytes(32), 0);
      for (const p of item) tx.addOutput(bitcoin.address.toOutputScript(p.address, network), p.sats);
      transactions.push(tx);
    }
    if (transactions.some((tx) => tx.hasWitnesses())) {
      // BIP141: the coinbase's witness holds a reserved value and an OP_RETURN output commits to the
      // witness merkle root (the coinbase's own wtxid counts as zero, so the new output changes nothing).
      const cb = transactions[0]!;
      cb.ins[0]!.witness = [new Uint8Array(32)];
      cb.addOutput(Uint8Array.from([0x6a, 0x24, 0xaa, 0x21, 0xa9, 0xed, ...bitcoin.Block.calculateMerkleRoot(transactions, true)]), 0n);
    }
    const block = new bitcoin.Block();
    block.version = 0x20000000;
    block.prevHash = Uint8Array.from(Buffer.from(prev.hash, 'hex').reverse());
    block.merkleRoot = bitcoin.Block.calculateMerkleRoot(transactions);
    block.timestamp = Math.max(prev.timestamp + 1, Math.floor(Date.now() / 1000));
    // 'bits': a block that really meets its own target, but a target regtest never demands (it has no
    // retargeting: every block carries its parent's 0x207fffff).
    block.bits = flaw === 'bits' ? 0x2000ffff : 0x207fffff;
    block.transactions = transactions;
    if (flaw === 'merkle') block.transactions = [...transactions, coinbase(height + 1_000_000)]; // a transaction the header does not commit to
    // Real mining at regtest difficulty; or, for 'pow', a nonce whose hash misses the target.
    for (block.nonce = 0; block.checkProofOfWork() === (flaw === 'pow'); block.nonce++);
    const raw = Buffer.from(block.toBuffer());
    chain.push({ hash: block.getId(), header: raw.subarray(0, 80).toString('hex'), raw, timestamp: block.timestamp });
    return transactions.slice(1).map((t) => t.getId());
  }

  const byHash = () => new Map(chain.map((b) => [b.hash, b]));
  const rawOf = (b: SimBlock) => b.raw ?? Buffer.from(b.header, 'hex');

  /** Bitcoin Core JSON-RPC 1.0 (src/rpc/server.cpp, httprpc.cpp): the methods the indexer calls. */
  function core(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, body: string): void {
    const expected = options.rpcAuth ? `Basic ${Buffer.from(`${options.rpcAuth.user}:${options.rpcAuth.password}`).toString('base64')}` : null;
    if (expected && req.headers.authorization !== expected) return void res.writeHead(401, { 'www-authenticate': 'Basic realm="jsonrpc"' }).end();
    let call: { id?: unknown; method?: string; params?: unknown[] };
    try {
      call = JSON.parse(body) as typeof call;
    } catch {
      return void res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ result: null, error: { code: -32700, message: 'Parse error' }, id: null }));
    }
    const reply = (result: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(`${JSON.stringify({ result, error: null, id: call.id })}\n`);
    const fail = (status: number, code: number, message: string) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(`${JSON.stringify({ result: null, error: { code, message }, id: call.id })}\n`);
    const p = call.params ?? [];
    switch (call.method) {
      case 'getblockcount':
        return void reply(chain.length - 1);
      case 'getblockhash': {
        const b = typeof p[0] === 'number' ? chain[p[0]] : undefined;
        return void (b ? reply(b.hash) : fail(500, -8, 'Block height out of range'));
      }
      case 'getblockheader': {
        const b = byHash().get(String(p[0]));
        if (!b) return void fail(500, -5, 'Block not found');
        return void (p[1] === false ? reply(b.header) : fail(500, -8, 'only verbose=false is served here'));
      }
      case 'getblock': {
        const b = byHash().get(String(p[0]));
        if (!b) return void fail(500, -5, 'Block not found');
        return void (p[1] === 0 ? reply(rawOf(b).toString('hex')) : fail(500, -8, 'only verbosity 0 is served here'));
      }
      default:
        return void fail(404, -32601, 'Method not found');
    }
  }

  const server: Server = createServer((req, res) => {
    stats.requests++;
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => core(req, res, Buffer.concat(chunks).toString()));
      return;
    }
    if (random() < faultRate) {
      stats.faults++;
      const fault = Math.floor(random() * 4);
      if (fault === 0) return void res.writeHead(429, { 'retry-after': '0' }).end('Too Many Requests');
      if (fault === 1) return void res.writeHead(503).end('<html>overloaded</html>');
      if (fault === 2) return void req.socket.destroy();
      return void setTimeout(() => res.destroy(), 2500);
    }
    const url = req.url ?? '';
    let m: RegExpExecArray | null;
    if (url === '/blocks/tip/height') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(String(chain.length - 1));
    if ((m = /^\/block-height\/(\d+)$/.exec(url))) {
      const b = chain[Number(m[1])];
      return void (b ? res.writeHead(200, { 'content-type': 'text/plain' }).end(b.hash) : res.writeHead(404).end('Block not found'));
    }
    if ((m = /^\/block\/([0-9a-f]{64})\/(header|raw)$/.exec(url))) {
      const b = byHash().get(m[1]!);
      if (!b) return void res.writeHead(404).end('Block not found');
      if (m[2] === 'header') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(b.header);
      return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(rawOf(b));
    }
    res.writeHead(404).end('not found');
  });
  const local = await listenLocal(server);
  return {
    url: local.url,
    height: () => chain.length - 1,
    mine,
    mineEmpty: (count: number) => {
      for (let i = 0; i < count; i++) mine();
    },
    rewind: (depth) => {
      chain.splice(chain.length - depth, depth);
    },
    setFaultRate: (rate) => {
      faultRate = rate;
    },
    stats,
    close: local.close,
  };
}

/**
 * A real mainnet transaction with taproot outputs: 00000a2d…6571 in block 834552 (hash
 * 00000000000000000001dd0468a70c94f619251d286585cff57aeb4bd9ede330), a key-path spend paying two
 * P2TR outputs. `hex` is the body of Esplora's GET /tx/:txid/hex; `vout` is the `vout` of its
 * GET /tx/:txid (the same objects GET /block/:hash/txs lists), in the shape Blockstream/electrs
 * serializes (src/rest.rs, TxOutValue: scriptpubkey_type "v1_p2tr" from Script::is_p2tr). Copied from
 * a public repository's fixture that did not record the electrs version that served it; the bytes
 * prove themselves, as they hash to the txid.
 */
export const MAINNET_TAPROOT_TX = {
  txid: '00000a2d1a9e29116b539b85b6e893213b1ed95a08b7526a8d59a4b088fc6571',
  status: { confirmed: true, block_height: 834552, block_hash: '00000000000000000001dd0468a70c94f619251d286585cff57aeb4bd9ede330', block_time: 1710355598 },
  hex:
    '01000000000101c05eb1b55ba2170d5149eb4954deb77553f059039ce6d9ef8794ca52d543482e0100000000540e0060025c0b000000000000' +
    '2251204b918d31f22461021ed54e354ac9dcbbe94b98edcfd3615b76c068b08222a87f372100000000000022512065fd3d423ea46a70505248db98' +
    '9e7302bfbbdd64ee4193dd9a59f69894f0de48014029783b151d376d5178451ce14f62b091059021680bff36aec2814e33ecacf130e8aa92d6da23' +
    'f35be7a8c2245b8f910261d4e6a5169f79d6ff7a3f412981f48600000000',
  vout: [
    {
      scriptpubkey: '51204b918d31f22461021ed54e354ac9dcbbe94b98edcfd3615b76c068b08222a87f',
      scriptpubkey_asm: 'OP_PUSHNUM_1 OP_PUSHBYTES_32 4b918d31f22461021ed54e354ac9dcbbe94b98edcfd3615b76c068b08222a87f',
      scriptpubkey_type: 'v1_p2tr',
      scriptpubkey_address: 'bc1pfwgc6v0jy3ssy8k4fc654jwuh055hx8delfkzkmkcp5tpq3z4pls7tx8q3',
      value: 2908,
    },
    {
      scriptpubkey: '512065fd3d423ea46a70505248db989e7302bfbbdd64ee4193dd9a59f69894f0de48',
      scriptpubkey_asm: 'OP_PUSHNUM_1 OP_PUSHBYTES_32 65fd3d423ea46a70505248db989e7302bfbbdd64ee4193dd9a59f69894f0de48',
      scriptpubkey_type: 'v1_p2tr',
      scriptpubkey_address: 'bc1pvh7n6s375348q5zjfrde38nnq2lmhhtyaeqe8hv6t8mf398smeyqnug47s',
      value: 8503,
    },
  ],
} as const;
