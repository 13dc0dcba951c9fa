// Sizes of a sweep transaction, in weight units (BIP141: base bytes count 4, witness bytes 1), so
// the planner's fee is the signed transaction's vsize times the rate, never less. Shared by the
// planner and the signer, which checks that the PSBT it signs pays no more than the plan said.

export type DepositScript = 'p2wpkh' | 'p2tr';

/** The deposit script an address pays to, or null for the kinds a sweep does not spend (1…, 3…, …). */
export function depositScript(address: string): DepositScript | null {
  if (/^(bc|tb|bcrt)1q[02-9ac-hj-np-z]{38}$/.test(address)) return 'p2wpkh';
  if (/^(bc|tb|bcrt)1p[02-9ac-hj-np-z]{58}$/.test(address)) return 'p2tr';
  return null;
}

/**
 * Outpoint (36) + empty scriptSig length (1) + sequence (4), times 4; then the witness: P2WPKH an
 * item count, a DER signature with its sighash byte (73 at most) and a 33-byte key; P2TR key path an
 * item count and a 64-byte Schnorr signature (SIGHASH_DEFAULT adds no byte).
 */
export const INPUT_WEIGHT: Readonly<Record<DepositScript, number>> = {
  p2wpkh: 41 * 4 + (1 + 1 + 73 + 1 + 33),
  p2tr: 41 * 4 + (1 + 1 + 64),
};

/** Version and lock time (8 bytes), the input and output counts, times 4; the segwit marker and flag (2 WU). */
export function overheadWeight(inputs: number, outputs: number): number {
  return (8 + varIntSize(inputs) + varIntSize(outputs)) * 4 + 2;
}

/** Value (8) + script length + script, times 4. */
export function outputWeight(scriptLength: number): number {
  return (8 + varIntSize(scriptLength) + scriptLength) * 4;
}

function varIntSize(n: number): number {
  return n < 0xfd ? 1 : n <= 0xffff ? 3 : 5;
}

/** vsize of a weight: weight / 4 rounded up. */
export function vsizeOf(weight: number): number {
  return Math.ceil(weight / 4);
}

/**
 * Bitcoin Core's dust limit for an output of this script length at its default 3 sat/vB dust relay
 * fee (policy.cpp GetDustThreshold): 546 for P2PKH, 540 P2SH, 294 P2WPKH, 330 P2WSH and P2TR.
 */
export function dustLimit(script: Uint8Array): bigint {
  const witness = script.length >= 4 && (script[0] === 0x00 || (script[0]! >= 0x51 && script[0]! <= 0x60)) && script[1] === script.length - 2;
  const outputSize = 8 + varIntSize(script.length) + script.length;
  // A spend of it: 32+4+1+4 bytes, plus 107 (non-witness) or 107/4 (witness) for the signature data.
  const spendSize = witness ? 32 + 4 + 1 + 4 + Math.floor(107 / 4) : 32 + 4 + 1 + 107 + 4;
  return BigInt((outputSize + spendSize) * 3);
}

/**
 * The most a refund without a change output pays above its vsize × rate: the change it did not make
 * because that output would have held less than the dust limit after paying for itself.
 */
export function droppedChangeCeiling(changeScript: Uint8Array, rate: bigint): bigint {
  return BigInt(vsizeOf(outputWeight(changeScript.length))) * rate + dustLimit(changeScript);
}
