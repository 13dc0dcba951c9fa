import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { HttpClient } from '../../src/families/http-client.ts';
import type { Rpc } from '../../src/families/jsonrpc/rpc.ts';
import { createJavaTronApi } from '../../src/families/tron/java-tron-api.ts';
import { hexToTron } from '../../src/families/tron/address.ts';
import { createTronSource, TRON_MAX_LOG_ADDRESSES } from '../../src/families/tron/tron-source.ts';
import { DELEGATE_RESOURCE, FREEZE_FOR_RECEIVER, TRC10_TRANSFER, TRX_TRANSFER } from '../helpers/tron-fixtures.ts';

// The Tron reader on the recorded java-tron answers (tron-fixtures.ts) without a node: the HTTP API
// text goes through the real client code (int64 digits kept, zod shapes), the /jsonrpc is a stand-in
// that records what is asked. The end-to-end run is tron-indexer.test.ts.

// protocol.Transaction.raw and the contracts of the fixtures, encoded as protobuf (core/Tron.proto,
// core/contract/*.proto): field numbers below. java-tron's txID is sha256 of exactly these bytes.
const varint = (n: bigint | number) => {
  let v = BigInt(n);
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return Buffer.from(out);
};
const fieldVarint = (f: number, v: bigint | number) => Buffer.concat([varint((f << 3) | 0), varint(v)]);
const fieldBytes = (f: number, b: Buffer) => Buffer.concat([varint((f << 3) | 2), varint(b.length), b]);
const hexBytes = (h: string) => Buffer.from(h, 'hex');
type Value = Record<string, string | number | boolean>;
const CONTRACTS: Record<string, { type: number; encode: (v: Value) => Buffer }> = {
  TransferContract: { type: 1, encode: (v) => Buffer.concat([fieldBytes(1, hexBytes(String(v.owner_address))), fieldBytes(2, hexBytes(String(v.to_address))), fieldVarint(3, Number(v.amount))]) },
  TransferAssetContract: {
    type: 2,
    encode: (v) => Buffer.concat([fieldBytes(1, hexBytes(String(v.asset_name))), fieldBytes(2, hexBytes(String(v.owner_address))), fieldBytes(3, hexBytes(String(v.to_address))), fieldVarint(4, Number(v.amount))]),
  },
  FreezeBalanceContract: {
    type: 11,
    encode: (v) =>
      Buffer.concat([
        fieldBytes(1, hexBytes(String(v.owner_address))),
        fieldVarint(2, Number(v.frozen_balance)),
        fieldVarint(3, Number(v.frozen_duration)),
        ...(v.resource === 'ENERGY' ? [fieldVarint(10, 1)] : []),
        ...(v.receiver_address ? [fieldBytes(15, hexBytes(String(v.receiver_address)))] : []),
      ]),
  },
  DelegateResourceContract: {
    type: 57,
    encode: (v) =>
      Buffer.concat([
        fieldBytes(1, hexBytes(String(v.owner_address))),
        ...(v.resource === 'ENERGY' ? [fieldVarint(2, 1)] : []),
        fieldVarint(3, Number(v.balance)),
        fieldBytes(4, hexBytes(String(v.receiver_address))),
        ...(v.lock ? [fieldVarint(5, 1)] : []),
      ]),
  },
};
interface RawData {
  contract: { type: string; parameter: { type_url: string; value: Value } }[];
  ref_block_bytes: string;
  ref_block_hash: string;
  expiration: number;
  timestamp: number;
  data?: string;
}
function encodeRaw(raw: RawData): Buffer {
  const c = raw.contract[0]!;
  const spec = CONTRACTS[c.type]!;
  const contract = Buffer.concat([fieldVarint(1, spec.type), fieldBytes(2, Buffer.concat([fieldBytes(1, Buffer.from(c.parameter.type_url)), fieldBytes(2, spec.encode(c.parameter.value))]))]);
  return Buffer.concat([
    fieldBytes(1, hexBytes(raw.ref_block_bytes)),
    fieldBytes(4, hexBytes(raw.ref_block_hash)),
    fieldVarint(8, raw.expiration),
    ...(raw.data ? [fieldBytes(10, hexBytes(raw.data))] : []),
    fieldBytes(11, contract),
    fieldVarint(14, raw.timestamp),
  ]);
}

/** java-tron's HTTP API as text, one block per height from `blocks`. */
function httpApi(blocks: Record<string, unknown>[]): HttpClient {
  const unused = () => Promise.reject(new Error('not used'));
  return {
    text: unused,
    bytes: unused,
    jsonRpc: unused,
    async post(path, body) {
      const b = body as { startNum?: number; endNum?: number; num?: number };
      if (path === '/wallet/getblockbylimitnext') {
        const got = blocks.filter((x) => {
          const n = Number((x.block_header as { raw_data: { number: number } }).raw_data.number);
          return n >= b.startNum! && n < b.endNum!;
        });
        return JSON.stringify(got.length ? { block: got } : {});
      }
      return '{}';
    },
  };
}

function recordingRpc() {
  const topicLists: number[] = [];
  const rpc: Rpc = {
    provider: undefined as never,
    close() {},
    async call<T>(method: string, params: unknown[]): Promise<T> {
      if (method !== 'eth_getLogs') throw new Error(`unexpected ${method}`);
      const topics = (params[0] as { topics: (string | string[] | null)[] }).topics;
      topicLists.push(Array.isArray(topics[2]) ? topics[2].length : 0);
      return [] as T;
    },
  };
  return { rpc, topicLists };
}

const block = (n: number, transactions: unknown[]) => ({
  blockID: n.toString(16).padStart(16, '0') + 'ab'.repeat(24),
  block_header: { raw_data: { number: n, parentHash: (n - 1).toString(16).padStart(16, '0') + 'ab'.repeat(24), timestamp: 1653443019000 + n * 3000, version: 30 } },
  transactions,
});

describe('tron reader on recorded java-tron answers', () => {
  test('every fixture is the real wire form: raw_data_hex is the protobuf of raw_data and txID its sha256', () => {
    for (const tx of [TRX_TRANSFER, TRC10_TRANSFER, DELEGATE_RESOURCE, FREEZE_FOR_RECEIVER]) {
      assert.equal(encodeRaw(tx.raw_data as RawData).toString('hex'), tx.raw_data_hex, `${tx.txID}: raw_data_hex`);
      assert.equal(createHash('sha256').update(hexBytes(tx.raw_data_hex)).digest('hex'), tx.txID, `${tx.txID}: txID`);
      assert.equal(tx.signature[0]!.length, 130, 'a 65-byte signature');
    }
  });

  test('only an explicit contractRet SUCCESS credits: a transaction without contractRet or without ret is recorded reverted', async () => {
    const to = TRX_TRANSFER.raw_data.contract[0]!.parameter.value.to_address;
    const deposit = hexToTron(`0x${to.slice(2)}`);
    const withRet = (ret: unknown) => {
      const { ret: _drop, ...rest } = TRX_TRANSFER;
      return ret === undefined ? rest : { ...rest, ret };
    };
    const { rpc } = recordingRpc();
    const source = createTronSource({
      api: createJavaTronApi(httpApi([block(100, [TRX_TRANSFER]), block(101, [{ ...withRet([{}]), txID: 'a'.repeat(64) }]), block(102, [{ ...withRet(undefined), txID: 'b'.repeat(64) }])])),
      rpc,
      addressChunk: 500,
      finality: false,
    });
    const range = await source.fetchRange(100n, 102n, { addresses: new Set([deposit]), paymentContract: null });
    assert.deepEqual(
      range.transfers.map((t) => [Number(t.blockNumber), t.amount, t.reverted, t.revertReason ?? null]),
      [
        [100, 1_318_520_000n, false, null],
        [101, 1_318_520_000n, true, 'java-tron reports no contract result (contractRet missing)'],
        [102, 1_318_520_000n, true, 'java-tron reports no contract result (contractRet missing)'],
      ],
    );
    assert.equal(range.transfers[0]!.txHash, TRX_TRANSFER.txID);
    assert.equal(range.transfers[0]!.from, hexToTron(`0x${TRX_TRANSFER.raw_data.contract[0]!.parameter.value.owner_address.slice(2)}`));
  });

  test('the TRC-10 transfer is a token of its own (TRC10:<id>), never TRX; delegation and freeze with a receiver are not transfers', async () => {
    const receiver = `0x${randomBytes(20).toString('hex')}`;
    const to41 = `41${receiver.slice(2).toLowerCase()}`;
    const put = (tx: typeof TRC10_TRANSFER | typeof DELEGATE_RESOURCE | typeof FREEZE_FOR_RECEIVER, key: string) => {
      const c = tx.raw_data.contract[0]!;
      return { ...tx, raw_data: { ...tx.raw_data, contract: [{ ...c, parameter: { ...c.parameter, value: { ...c.parameter.value, [key]: to41 } } }] } };
    };
    const { rpc } = recordingRpc();
    const source = createTronSource({ api: createJavaTronApi(httpApi([block(7, [put(TRC10_TRANSFER, 'to_address'), put(DELEGATE_RESOURCE, 'receiver_address'), put(FREEZE_FOR_RECEIVER, 'receiver_address')])])), rpc, addressChunk: 500, finality: false });
    const range = await source.fetchRange(7n, 7n, { addresses: new Set([hexToTron(receiver)]), paymentContract: null });
    assert.deepEqual(range.transfers.map((t) => [t.token, t.amount, t.kind, t.reverted]), [['TRC10:1004295', 50n, 'token', false]]);
  });

  test(`addressesPerLogQuery is capped at java-tron's ${TRON_MAX_LOG_ADDRESSES} topics per eth_getLogs`, async () => {
    const { rpc, topicLists } = recordingRpc();
    const source = createTronSource({ api: createJavaTronApi(httpApi([block(1, [])])), rpc, addressChunk: 5000, finality: false });
    const addresses = new Set(Array.from({ length: 2500 }, () => hexToTron(`0x${randomBytes(20).toString('hex')}`)));
    await source.fetchRange(1n, 1n, { addresses, paymentContract: null });
    assert.deepEqual(topicLists, [1000, 1000, 500], 'configured 5000 per query, sent at most 1000');
  });
});
