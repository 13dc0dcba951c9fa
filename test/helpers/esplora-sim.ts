import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import * as bitcoin from 'bitcoinjs-lib';
import { listenLocal } from './local-server.ts';

// A bitcoin chain behind the Esplora REST API (the protocol of mempool.space, Blockstream and
// electrs): real serialized blocks and transactions built with bitcoinjs-lib, served over HTTP on
// 127.0.0.1. Signatures are absent (nothing here validates scripts), everything else is genuine.

const GENESIS_HEADER =
  '0100000000000000000000000000000000000000000000000000000000000000000000003ba3edfd7a7b12b27ac72c3e67768f617fc81bc3888a51323a9fb8aa4b1e5e4a29ab5f49ffff001d1dac2b7c';

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
  /** Mines one block; each inner list becomes one transaction paying those outputs. Returns the txids. */
  mine(txs?: Payout[][]): string[];
  mineEmpty(count: number): void;
  /** Drops the top `depth` blocks (a reorg; mine again to build the competing branch). */
  rewind(depth: number): void;
  setFaultRate(rate: number): void;
  stats: { requests: number; faults: number };
  close(): Promise<void>;
}

export async function startEsploraSim(options: { network?: bitcoin.Network; seed?: number } = {}): Promise<EsploraSim> {
  const network = options.network ?? bitcoin.networks.bitcoin;
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

  function mine(txs: Payout[][] = []): string[] {
    const prev = chain[chain.length - 1]!;
    const height = chain.length;
    const transactions = [coinbase(height)];
    for (const payouts of txs) {
      const tx = new bitcoin.Transaction();
      tx.addInput(randomBytes(32), 0);
      for (const p of payouts) tx.addOutput(bitcoin.address.toOutputScript(p.address, network), p.sats);
      transactions.push(tx);
    }
    const block = new bitcoin.Block();
    block.version = 0x20000000;
    block.prevHash = Uint8Array.from(Buffer.from(prev.hash, 'hex').reverse());
    block.merkleRoot = bitcoin.Block.calculateMerkleRoot(transactions);
    block.timestamp = Math.max(prev.timestamp + 1, Math.floor(Date.now() / 1000));
    block.bits = 0x207fffff;
    block.nonce = height;
    block.transactions = transactions;
    const raw = Buffer.from(block.toBuffer());
    chain.push({ hash: block.getId(), header: raw.subarray(0, 80).toString('hex'), raw, timestamp: block.timestamp });
    return transactions.slice(1).map((t) => t.getId());
  }

  const byHash = () => new Map(chain.map((b) => [b.hash, b]));
  const server: Server = createServer((req, res) => {
    stats.requests++;
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
      if (!b || (m[2] === 'raw' && !b.raw)) return void res.writeHead(404).end('Block not found');
      if (m[2] === 'header') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(b.header);
      return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(b.raw);
    }
    res.writeHead(404).end('not found');
  });
  const local = await listenLocal(server);
  return {
    url: local.url,
    height: () => chain.length - 1,
    mine,
    mineEmpty: (count) => {
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
