import { createHash } from 'node:crypto';
import { BaseError } from '../../domain/errors.ts';

// The few protobuf messages a Tron sweep signs (java-tron protocol/src/main/protos/core/Tron.proto
// `Transaction`, `Transaction.raw`, `Transaction.Contract`; contract/balance_contract.proto,
// smart_contract.proto, account_contract.proto), encoded and decoded by hand. tronweb can build
// them too, but its encoder loads the whole client (axios and its HTTP providers) and reads int64
// as JS numbers; the offline signer loads neither. Fields are written in field-number order and
// proto3 zero values are left out, as protobuf-java and google-protobuf do, so a transaction has
// one encoding and sha256(raw_data) is its id (src/families/tron/sweep-proto.test.ts checks the
// bytes against tronweb 6.5.1's).

export const CONTRACT_TYPES = {
  AccountCreateContract: 0,
  TransferContract: 1,
  TriggerSmartContract: 31,
  DelegateResourceContract: 57,
  UnDelegateResourceContract: 58,
} as const;
export type ContractName = keyof typeof CONTRACT_TYPES;

/** ResourceCode in common.proto. */
export const ENERGY = 1;

/** One contract, its addresses as 21-byte hex with the 0x41 prefix (java-tron's JSON form). */
export type TronContract =
  | { type: 'TransferContract'; owner: string; to: string; amount: bigint }
  | { type: 'TriggerSmartContract'; owner: string; contract: string; callValue: bigint; data: string }
  | { type: 'DelegateResourceContract'; owner: string; receiver: string; resource: number; balance: bigint; lock: boolean; lockPeriod: bigint }
  | { type: 'UnDelegateResourceContract'; owner: string; receiver: string; resource: number; balance: bigint }
  | { type: 'AccountCreateContract'; owner: string; account: string; accountType: number };

export interface TronRaw {
  /** Bytes 6..8 of the reference block's number, hex (2 bytes). */
  refBlockBytes: string;
  /** Bytes 8..16 of the reference block's id, hex (8 bytes). */
  refBlockHash: string;
  /** ms since the epoch; java-tron refuses it at or before its head block's time, or more than 24 h after. */
  expiration: bigint;
  timestamp: bigint;
  /** Most sun the VM may burn for energy (TriggerSmartContract); 0 elsewhere. */
  feeLimit: bigint;
  contract: TronContract;
}

export class TronProtoError extends BaseError {
  override readonly name = 'TronProtoError';
}

// --- writing ---

function varint(value: bigint): number[] {
  if (value < 0n) throw new TronProtoError('negative values are not encoded here');
  const out: number[] = [];
  let v = value;
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}

const hexBytes = (hex: string) => [...Buffer.from(hex, 'hex')];

class Writer {
  readonly bytes: number[] = [];
  uint(field: number, value: bigint | number | boolean): this {
    const v = typeof value === 'boolean' ? (value ? 1n : 0n) : BigInt(value);
    if (v !== 0n) this.bytes.push(...varint(BigInt(field << 3)), ...varint(v));
    return this;
  }
  raw(field: number, value: number[]): this {
    if (value.length > 0) this.bytes.push(...varint(BigInt((field << 3) | 2)), ...varint(BigInt(value.length)), ...value);
    return this;
  }
}

function contractValue(c: TronContract): number[] {
  const w = new Writer();
  switch (c.type) {
    case 'TransferContract':
      return w.raw(1, hexBytes(c.owner)).raw(2, hexBytes(c.to)).uint(3, c.amount).bytes;
    case 'TriggerSmartContract':
      return w.raw(1, hexBytes(c.owner)).raw(2, hexBytes(c.contract)).uint(3, c.callValue).raw(4, hexBytes(c.data)).bytes;
    case 'DelegateResourceContract':
      return w.raw(1, hexBytes(c.owner)).uint(2, c.resource).uint(3, c.balance).raw(4, hexBytes(c.receiver)).uint(5, c.lock).uint(6, c.lockPeriod).bytes;
    case 'UnDelegateResourceContract':
      return w.raw(1, hexBytes(c.owner)).uint(2, c.resource).uint(3, c.balance).raw(4, hexBytes(c.receiver)).bytes;
    case 'AccountCreateContract':
      return w.raw(1, hexBytes(c.owner)).raw(2, hexBytes(c.account)).uint(3, c.accountType).bytes;
  }
}

/** The serialized Transaction.raw: what is hashed for the transaction id and signed. */
export function encodeRaw(raw: TronRaw): Uint8Array {
  const any = new Writer().raw(1, [...Buffer.from(`type.googleapis.com/protocol.${raw.contract.type}`)]).raw(2, contractValue(raw.contract)).bytes;
  const contract = new Writer().uint(1, CONTRACT_TYPES[raw.contract.type]).raw(2, any).bytes;
  const w = new Writer()
    .raw(1, hexBytes(raw.refBlockBytes))
    .raw(4, hexBytes(raw.refBlockHash))
    .uint(8, raw.expiration)
    .raw(11, contract)
    .uint(14, raw.timestamp)
    .uint(18, raw.feeLimit);
  return Uint8Array.from(w.bytes);
}

/** A signed Transaction: raw_data (1) and the signatures (2); the form /wallet/broadcasthex takes. */
export function encodeSigned(rawBytes: Uint8Array, signatures: Uint8Array[]): Uint8Array {
  const w = new Writer().raw(1, [...rawBytes]);
  for (const s of signatures) w.raw(2, [...s]);
  return Uint8Array.from(w.bytes);
}

export const txidOf = (rawBytes: Uint8Array): string => createHash('sha256').update(rawBytes).digest('hex');

// --- reading: strict, so that anything the encoder would not write is refused ---

type Field = { field: number; wire: 0; value: bigint } | { field: number; wire: 2; value: Uint8Array };

function fields(bytes: Uint8Array, what: string): Field[] {
  const out: Field[] = [];
  let i = 0;
  const read = (): bigint => {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (i >= bytes.length || shift > 63n) throw new TronProtoError(`${what}: a truncated or overlong varint`);
      const b = bytes[i++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
    }
  };
  while (i < bytes.length) {
    const key = read();
    const field = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) out.push({ field, wire, value: read() });
    else if (wire === 2) {
      const len = Number(read());
      if (i + len > bytes.length) throw new TronProtoError(`${what}: a field runs past the end`);
      out.push({ field, wire, value: bytes.subarray(i, i + len) });
      i += len;
    } else throw new TronProtoError(`${what}: wire type ${wire} is not used by these messages`);
  }
  return out;
}

/** Reads a message whose fields must be among `allowed` (number → wire type), each at most once. */
function message(bytes: Uint8Array, what: string, allowed: Record<number, 0 | 2>): Map<number, bigint | Uint8Array> {
  const out = new Map<number, bigint | Uint8Array>();
  for (const f of fields(bytes, what)) {
    if (allowed[f.field] !== f.wire) throw new TronProtoError(`${what}: field ${f.field} is not expected here`);
    if (out.has(f.field)) throw new TronProtoError(`${what}: field ${f.field} appears twice`);
    out.set(f.field, f.value);
  }
  return out;
}

const int = (m: Map<number, bigint | Uint8Array>, n: number) => (m.get(n) as bigint | undefined) ?? 0n;
const hex = (m: Map<number, bigint | Uint8Array>, n: number) => Buffer.from((m.get(n) as Uint8Array | undefined) ?? []).toString('hex');

function decodeContract(type: number, typeUrl: string, value: Uint8Array): TronContract {
  const name = (Object.keys(CONTRACT_TYPES) as ContractName[]).find((k) => CONTRACT_TYPES[k] === type);
  if (!name) throw new TronProtoError(`contract type ${type} is not one a sweep uses`);
  if (typeUrl !== `type.googleapis.com/protocol.${name}`) throw new TronProtoError(`the contract's type_url ${typeUrl} is not ${name}'s`);
  switch (name) {
    case 'TransferContract': {
      const m = message(value, name, { 1: 2, 2: 2, 3: 0 });
      return { type: name, owner: hex(m, 1), to: hex(m, 2), amount: int(m, 3) };
    }
    case 'TriggerSmartContract': {
      const m = message(value, name, { 1: 2, 2: 2, 3: 0, 4: 2 });
      return { type: name, owner: hex(m, 1), contract: hex(m, 2), callValue: int(m, 3), data: hex(m, 4) };
    }
    case 'DelegateResourceContract': {
      const m = message(value, name, { 1: 2, 2: 0, 3: 0, 4: 2, 5: 0, 6: 0 });
      return { type: name, owner: hex(m, 1), resource: Number(int(m, 2)), balance: int(m, 3), receiver: hex(m, 4), lock: int(m, 5) !== 0n, lockPeriod: int(m, 6) };
    }
    case 'UnDelegateResourceContract': {
      const m = message(value, name, { 1: 2, 2: 0, 3: 0, 4: 2 });
      return { type: name, owner: hex(m, 1), resource: Number(int(m, 2)), balance: int(m, 3), receiver: hex(m, 4) };
    }
    case 'AccountCreateContract': {
      const m = message(value, name, { 1: 2, 2: 2, 3: 0 });
      return { type: name, owner: hex(m, 1), account: hex(m, 2), accountType: Number(int(m, 3)) };
    }
  }
}

/** Decodes a Transaction.raw, refusing anything beyond one contract of the kinds above; re-encoding gives the same bytes. */
export function decodeRaw(bytes: Uint8Array): TronRaw {
  const m = message(bytes, 'Transaction.raw', { 1: 2, 4: 2, 8: 0, 11: 2, 14: 0, 18: 0 });
  const contractBytes = m.get(11) as Uint8Array | undefined;
  if (!contractBytes) throw new TronProtoError('Transaction.raw: no contract');
  const c = message(contractBytes, 'Transaction.Contract', { 1: 0, 2: 2 });
  const any = message((c.get(2) as Uint8Array | undefined) ?? new Uint8Array(), 'Any', { 1: 2, 2: 2 });
  const raw: TronRaw = {
    refBlockBytes: hex(m, 1),
    refBlockHash: hex(m, 4),
    expiration: int(m, 8),
    timestamp: int(m, 14),
    feeLimit: int(m, 18),
    contract: decodeContract(Number(int(c, 1)), Buffer.from((any.get(1) as Uint8Array | undefined) ?? []).toString('utf8'), (any.get(2) as Uint8Array | undefined) ?? new Uint8Array()),
  };
  // Field order, zero values and lengths all canonical: the bytes are exactly what this module writes.
  if (Buffer.compare(Buffer.from(encodeRaw(raw)), Buffer.from(bytes)) !== 0) throw new TronProtoError('Transaction.raw is not in its canonical encoding');
  return raw;
}

/** Splits a signed Transaction into its raw_data bytes and signatures. */
export function decodeSigned(bytes: Uint8Array): { raw: Uint8Array; signatures: Uint8Array[] } {
  const parts = fields(bytes, 'Transaction');
  const raw = parts.filter((f) => f.field === 1 && f.wire === 2);
  if (raw.length !== 1 || parts.some((f) => f.wire !== 2 || (f.field !== 1 && f.field !== 2))) throw new TronProtoError('not a signed Transaction (raw_data and signatures)');
  return { raw: raw[0]!.value as Uint8Array, signatures: parts.filter((f) => f.field === 2).map((f) => f.value as Uint8Array) };
}
