import { readFileSync, statSync } from 'node:fs';
import { Mnemonic } from 'ethers';
import { UsageError } from '../domain/errors.ts';

// The wallet secret `sweep sign` reads on the offline machine: a BIP39 phrase, a 64-byte seed in
// hex, or an account-level extended private key (xprv/tprv/zprv/vprv, secp256k1 families). It comes
// from a file only its owner can read, or from stdin, and no message ever repeats any of it.

export type WalletSecret = { kind: 'seed'; seed: Uint8Array } | { kind: 'account'; key: string };

const WORD_RE = /^[a-z]+$/;
const SEED_HEX_RE = /^(0x)?[0-9a-fA-F]{128}$/;
const ACCOUNT_KEY_RE = /^[xtzv]prv[1-9A-HJ-NP-Za-km-z]{100,}$/;

/** Reads the secret from `--seed-file` (refused unless mode 0600 or stricter) or stdin. */
export function readWalletSecret(source: { file?: string; stdin?: boolean }, readStdin: () => string = () => readFileSync(0, 'utf8')): WalletSecret {
  if (source.file !== undefined && source.stdin) throw new UsageError('give the secret once: --seed-file or --seed-stdin, not both');
  if (source.file === undefined && !source.stdin) throw new UsageError('the wallet secret is needed: --seed-file <path> (mode 0600) or --seed-stdin');
  let text: string;
  if (source.file !== undefined) {
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(source.file);
    } catch (err) {
      throw new UsageError(`cannot read the seed file ${source.file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    if (!st.isFile()) throw new UsageError(`the seed file ${source.file} is not a regular file`);
    // Anyone else who can read the file can spend every deposit it derives.
    if ((st.mode & 0o077) !== 0) {
      throw new UsageError(`the seed file ${source.file} can be read by others (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}): run \`chmod 600 ${source.file}\` first`);
    }
    text = readFileSync(source.file, 'utf8');
  } else {
    text = readStdin();
  }
  return parseWalletSecret(text);
}

/** The secret in one of its three forms; the refusal says which forms are read, never what was seen. */
export function parseWalletSecret(text: string): WalletSecret {
  const trimmed = text.trim();
  if (ACCOUNT_KEY_RE.test(trimmed)) return { kind: 'account', key: trimmed };
  if (SEED_HEX_RE.test(trimmed)) return { kind: 'seed', seed: Uint8Array.from(Buffer.from(trimmed.replace(/^0x/, ''), 'hex')) };
  const words = trimmed.toLowerCase().split(/\s+/).filter((w) => w !== '');
  if (words.length >= 12 && words.length <= 24 && words.every((w) => WORD_RE.test(w))) {
    const phrase = words.join(' ');
    if (!Mnemonic.isValidMnemonic(phrase)) throw new UsageError(`the ${words.length}-word phrase is not a valid BIP39 mnemonic (a word outside the English list, or a wrong checksum word)`);
    return { kind: 'seed', seed: Uint8Array.from(Buffer.from(Mnemonic.fromPhrase(phrase).computeSeed().slice(2), 'hex')) };
  }
  throw new UsageError('the wallet secret is not one chaingate reads: expected a 12–24 word BIP39 phrase, a 64-byte seed as 128 hex digits, or an account-level xprv/tprv/zprv/vprv');
}
