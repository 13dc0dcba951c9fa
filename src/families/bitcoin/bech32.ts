// Segwit addresses: bech32 (BIP173) for witness version 0, bech32m (BIP350) for version 1 (taproot)
// and later. Decoded here rather than by bitcoinjs-lib so that a refusal can say what is wrong (a
// mistyped character, the other checksum variant, a program of the wrong length), and encoded here
// so that reading a block's outputs needs neither exceptions nor curve arithmetic per output.
// Reasons never repeat the input: addresses of buyers must not end up in logs.

const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const GENERATOR = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3] as const;
/** What the checksum polymod must come to for each variant (BIP350, "Bech32m"). */
const CHECKSUM_CONSTANT = { bech32: 1, bech32m: 0x2bc830a3 } as const;
const MAX_LENGTH = 90;
const CHECKSUM_LENGTH = 6;

export type Bech32Variant = keyof typeof CHECKSUM_CONSTANT;

export interface SegwitProgram {
  hrp: string;
  version: number;
  program: Uint8Array;
  /** The checksum the text carries; which one a version needs is the caller's rule (segwitProblem). */
  variant: Bech32Variant;
}

function polymod(values: readonly number[]): number {
  let chk = 1;
  for (const value of values) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ value;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= GENERATOR[i]!;
  }
  return chk >>> 0;
}

function hrpExpand(hrp: string): number[] {
  const codes = [...hrp].map((c) => c.charCodeAt(0));
  return [...codes.map((c) => c >> 5), 0, ...codes.map((c) => c & 31)];
}

/** Regroups bits (8 → 5 to encode, 5 → 8 to decode); null when decoding leaves non-zero or whole-group padding. */
function convertBits(data: ArrayLike<number>, from: number, to: number, pad: boolean): number[] | null {
  let acc = 0;
  let bits = 0;
  const out: number[] = [];
  const max = (1 << to) - 1;
  for (let i = 0; i < data.length; i++) {
    acc = (acc << from) | data[i]!;
    bits += from;
    while (bits >= to) {
      bits -= to;
      out.push((acc >>> bits) & max);
    }
  }
  if (pad) {
    if (bits > 0) out.push((acc << (to - bits)) & max);
  } else if (bits >= from || ((acc << (to - bits)) & max) !== 0) {
    return null;
  }
  return out;
}

/** Decodes a segwit address, or says why it is not one. Mixed case is refused (BIP173); either single case is read. */
export function decodeSegwitAddress(input: string): SegwitProgram | { problem: string } {
  if (input.length > MAX_LENGTH) return { problem: `a segwit address is at most ${MAX_LENGTH} characters` };
  const lower = input.toLowerCase();
  if (input !== lower && input !== input.toUpperCase()) return { problem: 'it mixes upper- and lower-case letters' };
  const separator = lower.lastIndexOf('1');
  if (separator < 1 || separator + 1 + CHECKSUM_LENGTH >= lower.length) return { problem: 'it is too short to be a segwit address' };
  const hrp = lower.slice(0, separator);
  const data: number[] = [];
  for (const char of lower.slice(separator + 1)) {
    const value = CHARSET.indexOf(char);
    if (value < 0) return { problem: 'it has a character bech32 does not use (b, i, o and 1 never follow the separator)' };
    data.push(value);
  }
  const check = polymod([...hrpExpand(hrp), ...data]);
  const variant = check === CHECKSUM_CONSTANT.bech32 ? 'bech32' : check === CHECKSUM_CONSTANT.bech32m ? 'bech32m' : null;
  if (variant === null) return { problem: 'the checksum does not match: a character is mistyped, missing or swapped' };
  const version = data[0]!;
  if (version > 16) return { problem: `witness version ${version} does not exist (0 to 16)` };
  const program = convertBits(data.slice(1, -CHECKSUM_LENGTH), 5, 8, false);
  if (program === null) return { problem: 'its data does not decode to whole bytes' };
  return { hrp, version, program: Uint8Array.from(program), variant };
}

/**
 * What keeps a well-formed segwit program from being a safe deposit address, or null. The checksum
 * variant must fit the version (BIP350: bech32 for v0, bech32m for v1); v0 is P2WPKH or P2WSH; v1 is
 * taproot with a 32-byte output key (whether that key is on the curve is the caller's check); later
 * versions have no spending rules yet, so anyone could take what is sent there.
 */
export function segwitProblem({ version, program, variant }: SegwitProgram): string | null {
  if (version === 0) {
    if (variant !== 'bech32') return 'a witness v0 address (…1q…) carries a bech32 checksum (BIP173), but this one has a bech32m checksum';
    if (program.length !== 20 && program.length !== 32) return `a witness v0 program is 20 bytes (P2WPKH) or 32 bytes (P2WSH), not ${program.length}`;
    return null;
  }
  if (version >= 2) return `witness version ${version} is not in use yet: coins sent there could be taken by anyone`;
  if (variant !== 'bech32m') {
    return 'a taproot address (witness v1, …1p…) carries a bech32m checksum (BIP350), but this one has the older bech32 checksum: it is mistyped or was made by software that predates BIP350';
  }
  return program.length === 32 ? null : `a taproot (witness v1) program is a 32-byte output key, not ${program.length} bytes`;
}

/** The address of a witness program: bech32 for version 0, bech32m for 1 and later. */
export function encodeSegwitAddress(hrp: string, version: number, program: Uint8Array): string {
  const words = [version, ...convertBits(program, 8, 5, true)!];
  const mod = polymod([...hrpExpand(hrp), ...words, 0, 0, 0, 0, 0, 0]) ^ CHECKSUM_CONSTANT[version === 0 ? 'bech32' : 'bech32m'];
  const checksum = Array.from({ length: CHECKSUM_LENGTH }, (_, i) => (mod >>> (5 * (CHECKSUM_LENGTH - 1 - i))) & 31);
  return `${hrp}1${[...words, ...checksum].map((w) => CHARSET[w]).join('')}`;
}
