import { createHash } from 'node:crypto';
import { BIP32Factory } from 'bip32';
import type { BIP32Interface } from 'bip32';
import * as ecc from '@bitcoinerlab/secp256k1';
import { UsageError } from '../domain/errors.ts';
import { decodeBase58Check } from './base58check.ts';
import type { AddressScript, ExtendedKeyKind, SecretKeyForm } from './family.ts';

// chaingate is watch-only: it derives deposit addresses from an account-level extended PUBLIC key
// and must never be handed anything that can spend. Every refusal below describes what was seen
// without repeating a single character of it, so the secret cannot leak through logs or terminals.

const bip32 = BIP32Factory(ecc);

const WATCH_ONLY =
  'chaingate is watch-only and must never hold spending keys; export the account-level extended public key (xpub, zpub or vpub) instead. The value was not stored.';

const EXTENDED_KEY_BYTES = 78;
/** Offset of the key data in a serialized extended key; 0x00 there marks a private key. */
const KEY_DATA_OFFSET = 45;

/**
 * Serialization versions of extended public keys (SLIP-0132). Only the single-signature ones a
 * family can use are accepted; the others are named so the refusal can say what the key is for.
 */
const PUBLIC_VERSIONS: Readonly<Record<number, ExtendedKeyKind>> = {
  0x0488b21e: { prefix: 'xpub', testnet: false, script: 'any' },
  0x043587cf: { prefix: 'tpub', testnet: true, script: 'any' },
  0x04b24746: { prefix: 'zpub', testnet: false, script: 'p2wpkh' },
  0x045f1cf6: { prefix: 'vpub', testnet: true, script: 'p2wpkh' },
  0x049d7cb2: { prefix: 'ypub', testnet: false, script: 'p2sh-p2wpkh' },
  0x044a5262: { prefix: 'upub', testnet: true, script: 'p2sh-p2wpkh' },
  0x0295b43f: { prefix: 'Ypub', testnet: false, script: 'multisig' },
  0x02aa7ed3: { prefix: 'Zpub', testnet: false, script: 'multisig' },
  0x024289ef: { prefix: 'Upub', testnet: true, script: 'multisig' },
  0x02575483: { prefix: 'Vpub', testnet: true, script: 'multisig' },
};

const HEX_PRIVATE_KEY_RE = /^(0x)?[0-9a-fA-F]{64}$/;
const EXTENDED_PRIVATE_PREFIX_RE = /^[a-zA-Z]prv/;
/** An extended private key anywhere in the text, as inside an output descriptor `tr([…]xprv…/0/*)`. */
const EMBEDDED_EXTENDED_PRIVATE_RE = /(^|[(\],\s])[a-zA-Z]prv[1-9A-HJ-NP-Za-km-z]{100,}/;
/** `tr(`, `wpkh(`, `sh(wpkh(`, …: an output descriptor (BIP380) rather than a bare key. */
const DESCRIPTOR_RE = /^[a-z]+\(/;
const WORD_RE = /^[a-zA-Z]+$/;

/**
 * Throws UsageError when the input looks like private key material of any common kind, or of a form
 * one family's wallets export (`familyForms`: secretKeyForms() of src/families/families.ts, passed in
 * so this file needs no list of families); returns otherwise.
 */
export function assertPublicKeyMaterial(input: string, familyForms: readonly SecretKeyForm[]): void {
  const text = input.trim();
  const words = text.split(/[\s,]+/).filter((w) => w !== '');
  if (words.length >= 12 && words.length <= 25 && words.every((w) => WORD_RE.test(w))) {
    throw new UsageError(`refused: this looks like a seed phrase (${words.length} words). ${WATCH_ONLY}`);
  }
  if (HEX_PRIVATE_KEY_RE.test(text)) {
    throw new UsageError(`refused: this looks like a raw private key (64 hex digits). ${WATCH_ONLY}`);
  }
  // Refuse by prefix even when the checksum fails: a mistyped xprv is still a secret.
  if (EXTENDED_PRIVATE_PREFIX_RE.test(text) || EMBEDDED_EXTENDED_PRIVATE_RE.test(text)) {
    throw new UsageError(`refused: this looks like an extended PRIVATE key (…prv). ${WATCH_ONLY}`);
  }
  const payload = decodeBase58Check(text);
  if (payload !== null) {
    if (payload.length === EXTENDED_KEY_BYTES && payload[KEY_DATA_OFFSET] === 0x00) {
      throw new UsageError(`refused: this is an extended PRIVATE key. ${WATCH_ONLY}`);
    }
  }
  // The forms particular to one family's wallets (a family's descriptor names them).
  for (const form of familyForms) if (form.test(text)) throw new UsageError(`refused: this looks like ${form.what}. ${WATCH_ONLY}`);
}

export interface ParsedExtendedKey {
  node: BIP32Interface;
  kind: ExtendedKeyKind;
}

/** Parses any single- or multi-signature extended public key, refusing private material first (the families' forms too where the caller names them). */
export function parseExtendedPublicKey(input: string, familyForms: readonly SecretKeyForm[] = []): ParsedExtendedKey {
  assertPublicKeyMaterial(input, familyForms);
  const text = input.trim();
  const payload = decodeBase58Check(text);
  if (payload === null || payload.length !== EXTENDED_KEY_BYTES) {
    if (DESCRIPTOR_RE.test(text)) {
      throw new UsageError(
        'this is an output descriptor, not a key: pass only the xpub/tpub inside it (without the [fingerprint/path] origin and the /0/* ending) as --xpub, and add --script p2tr for a tr(…) descriptor',
      );
    }
    throw new UsageError('not an extended public key: expected a Base58Check xpub/zpub/tpub/vpub string (check for a typo or truncation)');
  }
  const version = new DataView(payload.buffer, payload.byteOffset, payload.byteLength).getUint32(0);
  const kind = PUBLIC_VERSIONS[version];
  if (kind === undefined) throw new UsageError('not an extended public key: unknown version bytes');
  // bip32 checks the version against the network it is given, so hand it the key's own version.
  const network = { wif: kind.testnet ? 0xef : 0x80, bip32: { public: version, private: 0 } };
  try {
    return { node: bip32.fromBase58(text, network), kind };
  } catch {
    throw new UsageError(`not a valid ${kind.prefix}: the key data is not a point on secp256k1`);
  }
}

/**
 * A short, stable id of an account key: the first 8 bytes of SHA-256 over its public key and chain
 * code, in hex. The same key gives the same id whether it was written as an xpub or a zpub, and the
 * id reveals nothing beyond what the public key already does. Taproot addresses of a key are another
 * series than its P2WPKH ones (their own indexes 0, 1, …), so their id is prefixed `p2tr:`.
 */
export function keyFingerprint(xpub: string, script?: AddressScript): string {
  const { node } = parseExtendedPublicKey(xpub);
  const id = createHash('sha256').update(node.publicKey).update(node.chainCode).digest('hex').slice(0, 16);
  return script === 'p2tr' ? `p2tr:${id}` : id;
}
