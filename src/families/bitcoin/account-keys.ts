import { UsageError } from '../../domain/errors.ts';
import type { AddressScript, ExtendedKeyKind } from '../family.ts';

/** The account a bitcoin wallet keeps for each script type (BIP84, BIP86; coin type 1' on every testnet). */
function accountPath(script: AddressScript, testnet: boolean): string {
  return `m/${script === 'p2tr' ? 86 : 84}'/${testnet ? 1 : 0}'/0'`;
}

/**
 * Throws UsageError, saying which key to export, when a single-signature key does not suit the
 * bitcoin addresses asked for. SLIP-0132 gives P2WPKH its own versions (zpub/vpub) but none to
 * taproot, whose BIP86 accounts keep the plain BIP32 xpub/tpub.
 */
export function checkBitcoinKeyKind(kind: ExtendedKeyKind, testnet: boolean, script: AddressScript | undefined): void {
  const wanted = script ?? 'p2wpkh';
  if (kind.script === 'p2sh-p2wpkh') {
    throw new UsageError(
      `a ${kind.prefix} is for nested segwit (BIP49, 3…/2… addresses); chaingate pays to native segwit or taproot, so export the BIP84 account key (${testnet ? 'vpub' : 'zpub'} at ${accountPath('p2wpkh', testnet)}) or the BIP86 one (${testnet ? 'tpub' : 'xpub'} at ${accountPath('p2tr', testnet)}, with --script p2tr)`,
    );
  }
  if (wanted === 'p2tr' && kind.script === 'p2wpkh') {
    throw new UsageError(
      `a ${kind.prefix} is a BIP84 native segwit key (…1q… addresses), not a taproot one; export the BIP86 account key, the ${testnet ? 'tpub' : 'xpub'} at ${accountPath('p2tr', testnet)} (BIP86 keeps the plain BIP32 versions), or leave out --script p2tr`,
    );
  }
  if (kind.testnet !== testnet) {
    const keys = wanted === 'p2tr' ? (testnet ? 'tpub' : 'xpub') : testnet ? 'tpub or vpub' : 'xpub or zpub';
    throw new UsageError(
      testnet
        ? `a ${kind.prefix} is a mainnet key; for --testnet export the ${keys} of ${accountPath(wanted, true)}`
        : `a ${kind.prefix} is a testnet key; for mainnet export the ${keys} of ${accountPath(wanted, false)}`,
    );
  }
}
