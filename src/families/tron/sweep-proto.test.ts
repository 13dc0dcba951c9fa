import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRaw, decodeSigned, encodeRaw, encodeSigned, ENERGY, type TronContract, type TronRaw, txidOf } from './sweep-proto.ts';

// The expected bytes and ids were produced by tronweb 6.5.1 (utils.transaction.txJsonToPb,
// txPbToRawDataHex, txPbToTxID: google-protobuf over java-tron's own .proto files) from the same
// java-tron JSON (visible=false) these contracts describe, with this header.
const header = { refBlockBytes: '3bd7', refBlockHash: '5e9fb4f32e6c3b53', expiration: 1767312000000n, timestamp: 1767225600000n };
const A = '41a614f803b6fd780986a42c78ec9c7f77e6ded13c';
const B = '4142a1e39aefa49290f2b3f9ed688d7cecf86cd6e0';
const U = '41b714f803b6fd780986a42c78ec9c7f77e6ded13c';
const transferData = `a9059cbb000000000000000000000000${B.slice(2)}${(25_000_000).toString(16).padStart(64, '0')}`;

const cases: { name: string; contract: TronContract; feeLimit?: bigint; hex: string; txid: string }[] = [
  {
    name: 'TransferContract',
    contract: { type: 'TransferContract', owner: A, to: B, amount: 123_456_789n },
    hex: '0a023bd722085e9fb4f32e6c3b5340808884e0b7335a68080112640a2d747970652e676f6f676c65617069732e636f6d2f70726f746f636f6c2e5472616e73666572436f6e747261637412330a1541a614f803b6fd780986a42c78ec9c7f77e6ded13c12154142a1e39aefa49290f2b3f9ed688d7cecf86cd6e018959aef3a7080d0eab6b733',
    txid: '8d9964a534f658eef89c03cccc0195a2a5fcaebbe7d46a9cae53b5afcf4e1a8f',
  },
  {
    name: 'TriggerSmartContract transfer(address,uint256) with a fee limit',
    contract: { type: 'TriggerSmartContract', owner: A, contract: U, callValue: 0n, data: transferData },
    feeLimit: 30_000_000n,
    hex: '0a023bd722085e9fb4f32e6c3b5340808884e0b7335aae01081f12a9010a31747970652e676f6f676c65617069732e636f6d2f70726f746f636f6c2e54726967676572536d617274436f6e747261637412740a1541a614f803b6fd780986a42c78ec9c7f77e6ded13c121541b714f803b6fd780986a42c78ec9c7f77e6ded13c2244a9059cbb00000000000000000000000042a1e39aefa49290f2b3f9ed688d7cecf86cd6e000000000000000000000000000000000000000000000000000000000017d78407080d0eab6b73390018087a70e',
    txid: '14ff86e5c052a9ff7fdb40f18d5aa648cb84b6880a9af53f7d3a941fc3baeb9d',
  },
  {
    name: 'DelegateResourceContract (ENERGY)',
    contract: { type: 'DelegateResourceContract', owner: B, receiver: A, resource: ENERGY, balance: 2_000_000_000n, lock: false, lockPeriod: 0n },
    hex: '0a023bd722085e9fb4f32e6c3b5340808884e0b7335a730839126f0a35747970652e676f6f676c65617069732e636f6d2f70726f746f636f6c2e44656c65676174655265736f75726365436f6e747261637412360a154142a1e39aefa49290f2b3f9ed688d7cecf86cd6e010011880a8d6b907221541a614f803b6fd780986a42c78ec9c7f77e6ded13c7080d0eab6b733',
    txid: '11f7fee73da5a862f6d1892ad864cb03a2529133ea83dce6cc7de6486a61e518',
  },
  {
    name: 'UnDelegateResourceContract (ENERGY)',
    contract: { type: 'UnDelegateResourceContract', owner: B, receiver: A, resource: ENERGY, balance: 2_000_000_000n },
    hex: '0a023bd722085e9fb4f32e6c3b5340808884e0b7335a75083a12710a37747970652e676f6f676c65617069732e636f6d2f70726f746f636f6c2e556e44656c65676174655265736f75726365436f6e747261637412360a154142a1e39aefa49290f2b3f9ed688d7cecf86cd6e010011880a8d6b907221541a614f803b6fd780986a42c78ec9c7f77e6ded13c7080d0eab6b733',
    txid: '7f89d2cf43431a0beb0eb0d07b2e06e4dca3a8480c7c73a946a275368e3f6590',
  },
  {
    name: 'AccountCreateContract',
    contract: { type: 'AccountCreateContract', owner: B, account: A, accountType: 0 },
    hex: '0a023bd722085e9fb4f32e6c3b5340808884e0b7335a6612640a32747970652e676f6f676c65617069732e636f6d2f70726f746f636f6c2e4163636f756e74437265617465436f6e7472616374122e0a154142a1e39aefa49290f2b3f9ed688d7cecf86cd6e0121541a614f803b6fd780986a42c78ec9c7f77e6ded13c7080d0eab6b733',
    txid: 'a9273cbc8b229ff7f96a91c911bb58e06eeff3d6fe0c614e8d7cad6fe136382b',
  },
];

for (const c of cases) {
  test(`encodeRaw() writes a ${c.name} byte for byte as tronweb does, and decodeRaw() reads it back`, () => {
    const raw: TronRaw = { ...header, feeLimit: c.feeLimit ?? 0n, contract: c.contract };
    const bytes = encodeRaw(raw);
    assert.equal(Buffer.from(bytes).toString('hex'), c.hex);
    assert.equal(txidOf(bytes), c.txid);
    assert.deepEqual(decodeRaw(bytes), raw);
  });
}

test('decodeRaw() refuses a second contract, an unknown field and a non-canonical encoding', () => {
  const bytes = Buffer.from(cases[0]!.hex, 'hex');
  const contractField = bytes.subarray(bytes.indexOf(0x5a)); // tag of field 11 and the rest
  const twoContracts = Buffer.concat([bytes, contractField.subarray(0, contractField.length - 7)]);
  assert.throws(() => decodeRaw(twoContracts), /field 11 appears twice|not expected|runs past/);
  assert.throws(() => decodeRaw(Buffer.concat([bytes, Buffer.from([0x52, 0x01, 0x00])])), /field 10 is not expected/); // data (a memo)
  assert.throws(() => decodeRaw(Buffer.concat([bytes, Buffer.from([0x70, 0x00])])), /field 14 appears twice|canonical/);
});

test('encodeSigned() and decodeSigned() wrap raw_data with its signature', () => {
  const raw = Buffer.from(cases[0]!.hex, 'hex');
  const sig = Buffer.alloc(65, 7);
  const signed = decodeSigned(encodeSigned(raw, [sig]));
  assert.deepEqual(Buffer.from(signed.raw), raw);
  assert.deepEqual(signed.signatures.map((s) => Buffer.from(s)), [sig]);
});
