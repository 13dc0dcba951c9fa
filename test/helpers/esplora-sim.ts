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
  txs: bitcoin.Transaction[];
}

export interface Payout {
  address: string;
  sats: bigint;
}

export interface EsploraSim {
  url: string;
  height(): number;
  /**
   * Mines one block: the mempool first (transactions the node accepted), then each inner list
   * becomes one transaction paying those outputs, and a Transaction goes in as it is (a real one,
   * signatures and all). Returns the txids of the transactions given.
   */
  mine(txs?: Array<Payout[] | bitcoin.Transaction>, flaw?: 'merkle' | 'pow' | 'bits'): string[];
  mineEmpty(count: number): void;
  /** Drops the top `depth` blocks (a reorg; mine again to build the competing branch). */
  rewind(depth: number): void;
  setFaultRate(rate: number): void;
  stats: { requests: number; faults: number };
  /** Raw transactions received by POST /tx or sendrawtransaction, in order (accepted or not). */
  posted: string[];
  /** Txids waiting in the mempool for the next mine(). */
  mempool(): string[];
  setFeeEstimates(estimates: Record<string, number>): void;
  close(): Promise<void>;
}

export async function startEsploraSim(options: { seed?: number; rpcAuth?: { user: string; password: string } } = {}): Promise<EsploraSim> {
  const network = bitcoin.networks.regtest;
  const genesis = bitcoin.Block.fromHex(GENESIS_HEADER);
  const chain: SimBlock[] = [{ hash: genesis.getId(), header: GENESIS_HEADER, raw: null, timestamp: genesis.timestamp, txs: [] }];
  // Transactions POST /tx (or sendrawtransaction) accepted, mined by the next mine().
  const mempool: bitcoin.Transaction[] = [];
  const posted: string[] = [];
  let feeEstimates: Record<string, number> = DEFAULT_FEE_ESTIMATES;
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
    for (const item of [...mempool.splice(0), ...txs]) {
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
    chain.push({ hash: block.getId(), header: raw.subarray(0, 80).toString('hex'), raw, timestamp: block.timestamp, txs: transactions });
    return transactions.slice(1 + transactions.length - 1 - txs.length).map((t) => t.getId());
  }

  const byHash = () => new Map(chain.map((b) => [b.hash, b]));

  /** Every transaction the node knows: in a block (with its height) or in the mempool (height null). */
  function known(): { tx: bitcoin.Transaction; height: number | null; block: SimBlock | null }[] {
    return [...chain.flatMap((b, height) => b.txs.map((tx) => ({ tx, height, block: b }))), ...mempool.map((tx) => ({ tx, height: null, block: null }))];
  }
  const outpoint = (hash: Uint8Array, index: number) => `${Buffer.from(hash).reverse().toString('hex')}:${index}`;
  function spender(txid: string, vout: number): { tx: bitcoin.Transaction; height: number | null } | null {
    for (const k of known()) if (k.tx.ins.some((i) => outpoint(i.hash, i.index) === `${txid}:${vout}`)) return k;
    return null;
  }
  function addressOf(script: Uint8Array): string | null {
    try {
      return bitcoin.address.fromOutputScript(script, network);
    } catch {
      return null;
    }
  }
  /** Esplora's GET /address/:address/utxo rows (electrs src/rest.rs UtxoValue). */
  function utxosOf(address: string) {
    const out = [];
    for (const { tx, height, block } of known()) {
      const txid = tx.getId();
      for (const [vout, o] of tx.outs.entries()) {
        if (addressOf(o.script) !== address || spender(txid, vout)) continue;
        const status = height === null ? { confirmed: false } : { confirmed: true, block_height: height, block_hash: block!.hash, block_time: block!.timestamp };
        out.push({ txid, vout, status, value: Number(o.value) });
      }
    }
    return out;
  }
  function findTx(txid: string) {
    return known().find((k) => k.tx.getId() === txid) ?? null;
  }
  /**
   * Accepts a raw transaction as bitcoind's mempool would (the checks a sweep can fail): it must
   * decode, spend only unspent outputs the node knows, and carry a valid signature for each
   * P2WPKH and P2TR key-path input. Answers Core's error codes (src/rpc/mempool.cpp, validation.cpp).
   */
  function accept(hex: string): { txid: string } | { code: number; message: string } {
    let tx: bitcoin.Transaction;
    try {
      tx = bitcoin.Transaction.fromHex(hex);
    } catch {
      return { code: -22, message: 'TX decode failed. Make sure the tx has at least one input.' };
    }
    const txid = tx.getId();
    const existing = findTx(txid);
    if (existing && existing.height === null) return { txid };
    if (existing) return { code: -27, message: 'Transaction outputs already in utxo set' };
    const prevouts: { script: Uint8Array; value: bigint }[] = [];
    for (const input of tx.ins) {
      const [prevTxid, vout] = outpoint(input.hash, input.index).split(':') as [string, string];
      const prev = findTx(prevTxid)?.tx.outs[Number(vout)];
      if (!prev || spender(prevTxid, Number(vout))) return { code: -25, message: 'bad-txns-inputs-missingorspent' };
      prevouts.push({ script: prev.script, value: prev.value });
    }
    for (const [i, input] of tx.ins.entries()) {
      const prev = prevouts[i]!;
      const ok =
        prev.script.length === 34 && prev.script[0] === 0x51
          ? input.witness.length === 1 &&
            ecc.verifySchnorr(tx.hashForWitnessV1(i, prevouts.map((p) => p.script), prevouts.map((p) => p.value), bitcoin.Transaction.SIGHASH_DEFAULT), prev.script.subarray(2), input.witness[0]!.subarray(0, 64))
          : prev.script.length === 22 && prev.script[0] === 0x00 && input.witness.length === 2 && (() => {
              const sig = bitcoin.script.signature.decode(input.witness[0]!);
              const pubkey = input.witness[1]!;
              const hash160 = bitcoin.crypto.hash160(pubkey);
              const scriptCode = bitcoin.payments.p2pkh({ hash: hash160 }).output!;
              return Buffer.compare(Buffer.from(hash160), Buffer.from(prev.script.subarray(2))) === 0 && ecc.verify(tx.hashForWitnessV0(i, scriptCode, prev.value, sig.hashType), pubkey, sig.signature);
            })();
      if (!ok) return { code: -26, message: `mempool-script-verify-flag-failed (Signature must be zero for failed CHECK(MULTI)SIG operation), input ${i}` };
    }
    const spent = tx.outs.reduce((s, o) => s + o.value, 0n);
    const funded = prevouts.reduce((s, p) => s + p.value, 0n);
    if (spent > funded) return { code: -25, message: 'bad-txns-in-belowout' };
    mempool.push(tx);
    return { txid };
  }
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
      case 'scantxoutset': {
        // {"success", "txouts", "height", "bestblock", "unspents": [{txid, vout, scriptPubKey, desc, amount (BTC), coinbase, height}], "total_amount"}
        if (p[0] !== 'start' || !Array.isArray(p[1])) return void fail(500, -8, 'Invalid action');
        const unspents = (p[1] as string[]).flatMap((d) => {
          const address = /^addr\(([^)]+)\)$/.exec(d)?.[1] ?? '';
          const script = Buffer.from(bitcoin.address.toOutputScript(address, network)).toString('hex');
          return utxosOf(address)
            .filter((u) => u.status.confirmed)
            .map((u) => ({ txid: u.txid, vout: u.vout, scriptPubKey: script, desc: `addr(${address})#00000000`, sats: BigInt(u.value), height: (u.status as { block_height: number }).block_height }));
        });
        // Written by hand: bitcoind prints amounts as JSON numbers with 8 decimals, which JSON.stringify would not keep.
        const rows = unspents.map(({ sats: value, ...u }) => `${JSON.stringify({ ...u, coinbase: false }).slice(0, -1)},"amount":${btcText(value)}}`);
        const total = unspents.reduce((sum, u) => sum + u.sats, 0n);
        return void res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(`{"result":{"success":true,"txouts":${rows.length},"height":${chain.length - 1},"bestblock":"${chain[chain.length - 1]!.hash}","unspents":[${rows.join(',')}],"total_amount":${btcText(total)}},"error":null,"id":${JSON.stringify(call.id ?? null)}}\n`);
      }
      case 'estimatesmartfee':
        // regtest without fee history: {"errors": ["Insufficient data or no feerate found"], "blocks": 0}
        return void reply({ errors: ['Insufficient data or no feerate found'], blocks: 0 });
      case 'sendrawtransaction': {
        posted.push(String(p[0]));
        const r = accept(String(p[0]));
        return void ('txid' in r ? reply(r.txid) : fail(500, r.code, r.message));
      }
      case 'getrawtransaction': {
        const k = findTx(String(p[0]));
        if (!k) return void fail(500, -5, 'No such mempool or blockchain transaction. Use gettransaction for wallet transactions.');
        return void reply({ txid: k.tx.getId(), hex: k.tx.toHex(), ...(k.height === null ? {} : { confirmations: chain.length - k.height, blockhash: k.block!.hash }) });
      }
      case 'gettxout': {
        const k = findTx(String(p[0]));
        const o = k?.tx.outs[Number(p[1])];
        if (!k || !o || spender(String(p[0]), Number(p[1]))) return void reply(null);
        return void reply({ bestblock: chain[chain.length - 1]!.hash, confirmations: k.height === null ? 0 : chain.length - k.height, value: Number(o.value) / 1e8 });
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
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        if (req.url !== '/tx') return core(req, res, body);
        // Esplora POST /tx: raw hex in, txid out; a refusal is HTTP 400 with bitcoind's error (electrs src/rest.rs).
        posted.push(body.trim());
        const r = accept(body.trim());
        if ('txid' in r) return void res.writeHead(200, { 'content-type': 'text/plain' }).end(r.txid);
        res.writeHead(400, { 'content-type': 'text/plain' }).end(`sendrawtransaction RPC error: ${JSON.stringify({ code: r.code, message: r.message })}`);
      });
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
    const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if ((m = /^\/address\/([a-z0-9]+)\/utxo$/.exec(url))) return void json(utxosOf(m[1]!));
    // {"1": 87.882, "2": 87.882, …, "144": 1.027}: sat/vB by confirmation target (Blockstream Esplora API docs, GET /fee-estimates).
    if (url === '/fee-estimates') return void json(feeEstimates);
    if ((m = /^\/tx\/([0-9a-f]{64})\/status$/.exec(url))) {
      const k = findTx(m[1]!);
      if (!k) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('Transaction not found');
      return void json(k.height === null ? { confirmed: false } : { confirmed: true, block_height: k.height, block_hash: k.block!.hash, block_time: k.block!.timestamp });
    }
    if ((m = /^\/tx\/([0-9a-f]{64})\/outspend\/(\d+)$/.exec(url))) {
      const k = findTx(m[1]!);
      if (!k?.tx.outs[Number(m[2])]) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('Transaction not found');
      const by = spender(m[1]!, Number(m[2]));
      return void json(by ? { spent: true, txid: by.tx.getId(), status: by.height === null ? { confirmed: false } : { confirmed: true, block_height: by.height } } : { spent: false });
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
    posted,
    mempool: () => mempool.map((tx) => tx.getId()),
    setFeeEstimates: (estimates) => {
      feeEstimates = estimates;
    },
    close: local.close,
  };
}

/** A mainnet-like answer to GET /fee-estimates (mempool.space's shape; values in sat/vB). */
const DEFAULT_FEE_ESTIMATES: Record<string, number> = { '1': 12.118, '2': 10.5, '3': 9.012, '4': 8.2, '5': 7.7, '6': 6.303, '144': 1.025, '504': 1.001, '1008': 1.001 };

/** Satoshis as bitcoind writes BTC amounts: 8 decimals (ValueFromAmount). */
function btcText(value: bigint): string {
  return `${value / 100_000_000n}.${(value % 100_000_000n).toString().padStart(8, '0')}`;
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
