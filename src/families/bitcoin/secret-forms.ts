import { decodeBase58Check } from '../base58check.ts';
import type { SecretKeyForm } from '../family.ts';

// The secret forms bitcoin wallets export beyond extended private keys: its own file so the family's
// descriptor and the sweep planner (which reads an account key) share it without importing each other.

const WIF_VERSIONS = new Set([0x80, 0xef]);

/** Wallet Import Format: a version byte (mainnet 0x80, testnet 0xef), the 32-byte key and an optional 0x01 (compressed), base58check. */
function isWif(text: string): boolean {
  const payload = decodeBase58Check(text);
  return payload !== null && (payload.length === 33 || (payload.length === 34 && payload[33] === 0x01)) && WIF_VERSIONS.has(payload[0] ?? -1);
}

export const bitcoinSecretKeyForms: readonly SecretKeyForm[] = [{ what: 'a WIF private key', test: isWif }];
