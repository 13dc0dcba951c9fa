import { createHash } from 'node:crypto';
import { decodeBase58, encodeBase58 } from '../base58check.ts';
import { UsageError } from '../../domain/errors.ts';
import { ed25519PublicKey, slip10Ed25519 } from '../ed25519-keys.ts';

// Solana keys for the offline signer: accounts at m/44'/501'/i'/0' of a BIP39 seed (SLIP-0010
// ed25519, src/families/ed25519-keys.ts), their addresses, and the program addresses the signer
// checks. Only hardened children exist in SLIP-0010 ed25519, which is why a Solana pool cannot be
// derived from a public key on the server.

/** The wallet path of a Solana account: m/44'/501'/i'/0' (Phantom, Solflare, Backpack, `solana-keygen --derivation-path`). */
export const solanaPath = (index: number): string => `m/44'/501'/${index}'/0'`;

/** The address (base58 public key) of the account at m/44'/501'/index'/0'. */
export function solanaKeyAt(seed: Uint8Array, index: number): { address: string; privateKey: Uint8Array } {
  const { key } = slip10Ed25519(seed, [44, 501, index, 0]);
  return { address: encodeBase58(ed25519PublicKey(key)), privateKey: key };
}

/**
 * The deposit addresses a seed gives at indexes start … start+count-1, one per line as
 * `wallets seed --chain solana --file` reads them. Pure; meant for the offline machine.
 */
export function solanaDepositAddresses(seed: Uint8Array, start: number, count: number): { index: number; path: string; address: string }[] {
  const out: { index: number; path: string; address: string }[] = [];
  for (let i = start; i < start + count; i++) out.push({ index: i, path: solanaPath(i), address: solanaKeyAt(seed, i).address });
  return out;
}

/**
 * A keypair file as `solana-keygen new` writes it: a JSON array of 64 bytes, the ed25519 seed
 * then the public key. The public half is checked against the private one, so a damaged file is
 * refused instead of signing for an address nobody expects.
 */
export function keyFromKeypairFile(text: string): { address: string; privateKey: Uint8Array } {
  let bytes: unknown;
  try {
    bytes = JSON.parse(text);
  } catch {
    throw new UsageError('the keypair file is not JSON: expected the 64-number array solana-keygen writes');
  }
  if (!Array.isArray(bytes) || bytes.length !== 64 || !bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
    throw new UsageError('the keypair file must be a JSON array of 64 bytes (solana-keygen format)');
  }
  const privateKey = new Uint8Array(bytes.slice(0, 32) as number[]);
  const publicKey = ed25519PublicKey(privateKey);
  if (!Buffer.from(publicKey).equals(Buffer.from(bytes.slice(32) as number[]))) {
    throw new UsageError('the keypair file\'s public half does not match its private half: the file is damaged');
  }
  return { address: encodeBase58(publicKey), privateKey };
}

/**
 * Finds the index of an address among the first `limit` accounts of a seed. The derived
 * addresses are remembered per seed (by its hash, in this process only), so a plan of 200 list
 * deposits searches the range once, not 200 times.
 */
const searched = new Map<string, { next: number; byAddress: Map<string, number> }>();

export function findSolanaIndex(seed: Uint8Array, target: string, limit: number): number | null {
  const id = createHash('sha256').update(seed).digest('hex');
  let memo = searched.get(id);
  if (!memo) {
    memo = { next: 0, byAddress: new Map() };
    searched.set(id, memo);
  }
  const known = memo.byAddress.get(target);
  if (known !== undefined && known < limit) return known;
  for (; memo.next < limit; memo.next++) {
    const { address } = solanaKeyAt(seed, memo.next);
    memo.byAddress.set(address, memo.next);
    if (address === target) return memo.next++;
  }
  return null;
}

/** Whether 32 bytes decode to a point of ed25519 (a key someone may hold) or not (a program address). */
export function isOnCurve(bytes: Uint8Array): boolean {
  // RFC 8032 §5.1.3 decoding: y from the bytes, x² = (y² − 1) / (d·y² + 1) must be a square mod p.
  const P = 2n ** 255n - 19n;
  const D = (-121665n * modInverse(121666n, P)) % P;
  let y = 0n;
  for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(i === 31 ? bytes[i]! & 0x7f : bytes[i]!);
  const mod = (a: bigint) => ((a % P) + P) % P;
  const y2 = mod(y * y);
  const x2 = mod((y2 - 1n) * modInverse(mod(D * y2 + 1n), P));
  if (x2 === 0n) return (bytes[31]! & 0x80) === 0; // x = 0 has no negative form
  return modPow(x2, (P - 1n) / 2n, P) === 1n;
}

function modPow(base: bigint, exponent: bigint, m: bigint): bigint {
  let result = 1n;
  let b = ((base % m) + m) % m;
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % m;
    b = (b * b) % m;
  }
  return result;
}

const modInverse = (a: bigint, p: bigint) => modPow(a, p - 2n, p);

/**
 * A program derived address (find_program_address): the first bump from 255 down whose
 * SHA-256(seeds ‖ bump ‖ program ‖ "ProgramDerivedAddress") is off the curve. Synchronous, for the
 * offline signer, which checks the cold wallet's token accounts itself.
 */
export function findProgramAddress(seeds: readonly Uint8Array[], program: string): string {
  const programBytes = decodeBase58(program);
  if (programBytes?.length !== 32) throw new UsageError('not a program address');
  for (let bump = 255; bump >= 0; bump--) {
    const hash = createHash('sha256');
    for (const seed of seeds) hash.update(seed);
    const candidate = hash.update(Uint8Array.of(bump)).update(programBytes).update('ProgramDerivedAddress').digest();
    if (!isOnCurve(candidate)) return encodeBase58(candidate);
  }
  throw new UsageError('no program address for these seeds');
}
