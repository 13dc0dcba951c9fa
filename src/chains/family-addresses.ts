import { BaseError } from '../domain/errors.ts';
// What a chain family provides for its addresses. Each family implements this in
// src/indexers/<family>/address.ts; src/indexers/families.ts lists them. Messages never repeat the
// address itself: addresses of buyers must not end up in logs, and an error message is the likeliest
// thing to be logged.

export class InvalidAddressError extends BaseError {
  override readonly name = 'InvalidAddressError';
}

export interface ValidateAddressOptions {
  /**
   * TON only. 'deposit' (default) renders the non-bounceable form (UQ…/0Q…): a deposit address is a
   * wallet that may not be deployed yet, and a bounceable transfer to it would bounce back to the
   * buyer. 'contract' renders the bounceable form (EQ…/kQ…) used for deployed contracts such as
   * jetton masters.
   */
  kind?: 'deposit' | 'contract';
  /** The network's name where the family has variants with their own address prefix (bitcoin REGTEST: bcrt1). */
  network?: string;
}

/**
 * The output script receive addresses are derived for, where a family has a choice (bitcoin only):
 * 'p2wpkh' is BIP84 native segwit (the default), 'p2tr' BIP86 taproot (key path only, no script tree).
 */
export type AddressScript = 'p2wpkh' | 'p2tr';

export interface FamilyAddresses {
  /** The address in its canonical form for the family and network, or throws InvalidAddressError. `input` is trimmed and non-empty. */
  validate(input: string, testnet: boolean, options: ValidateAddressOptions): string;
  /**
   * The encoder of receive addresses from the compressed secp256k1 public keys derived from an
   * account xpub. Absent where the family's wallets do not derive from one (the pool is seeded from
   * an address list instead). `script` is given only for families with a choice (parseAccountKey
   * refuses it elsewhere).
   */
  fromPublicKey?: (testnet: boolean, network: string | undefined, script?: AddressScript) => (publicKey: Uint8Array) => string;
}
