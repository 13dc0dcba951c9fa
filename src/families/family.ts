import type { ChainFamily } from '../chains/slugs.ts';
import type { ReceiptReaderFactory, SourceFactory } from './source.ts';
import type { FamilySweepPlanner, FamilySweepSender, FamilySweepSigner, FamilySweepVerifier } from './sweep.ts';

// What a chain family provides: one folder src/families/<family>/ implements this in its family.ts,
// and src/families/families.ts lists them. Messages never repeat an address itself: addresses of
// buyers must not end up in logs, and an error message is the likeliest thing to be logged.

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
}

/** What an extended public key's version bytes say it is for (SLIP-0132; src/families/key-material.ts). */
export interface ExtendedKeyKind {
  prefix: string;
  testnet: boolean;
  /** 'any' for plain BIP32 versions, which say nothing about the script type. */
  script: 'any' | 'p2wpkh' | 'p2sh-p2wpkh' | 'multisig';
}

/** Watch-only derivation of receive addresses from an account-level extended public key. */
export interface FamilyKeys {
  /** The encoder of receive addresses from compressed secp256k1 public keys. `script` only where `scripts` lists a choice. */
  fromPublicKey(testnet: boolean, network: string | undefined, script?: AddressScript): (publicKey: Uint8Array) => string;
  /** Output types to choose from (bitcoin); absent where the family has one kind of address. */
  scripts?: readonly AddressScript[];
  /** BIP44 purpose and coin type above the account, as a wallet shows them for this address ("44'/60'"). */
  purposeAndCoin(testnet: boolean, address: string): string;
  /** Throws UsageError, saying which key to export instead, when a single-signature key does not suit these addresses. */
  checkKind(kind: ExtendedKeyKind, testnet: boolean, script: AddressScript | undefined): void;
}

/** What the QR code and the wallet link carry for one payment (docs/hosted-page.md). */
export interface PaymentUriInput {
  chainId: number | null;
  address: string;
  /** Decimal string in whole-coin units. */
  amount: string;
  /** The amount in atomic units; null when it does not fit the coin's decimals (left out of the URI, not rounded). */
  atomic: bigint | null;
  /** Token contract; null for the native coin. */
  tokenAddress: string | null;
}

/** The family's own coin: the native coin of its chains unless a chain names another (POL, BNB, AVAX on EVM chains). */
export interface FamilyCoin {
  symbol: string;
  /** The name of its smallest unit, as commands print atomic amounts ("21000 wei"). */
  atomicUnit: string;
  /** Its CoinGecko id, for the HTTP rate source (docs/pricing.md). */
  rateId: string;
}

/** A form of secret key the family's wallets export, refused wherever a public key is asked for (src/families/key-material.ts). */
export interface SecretKeyForm {
  /** What the refusal calls it, never repeating the value: "a Solana secret key (64 bytes in base58)". */
  what: string;
  test(text: string): boolean;
}

/**
 * The family's descriptor: everything particular to it, in its folder's family.ts. Every list,
 * table or switch of families elsewhere is derived from these (src/families/families.ts).
 */
export interface ChainFamilyAdapter {
  family: ChainFamily;
  /** How messages name the family: "EVM", "Bitcoin". */
  label: string;
  native: FamilyCoin;
  /** Key-file rules: the secret forms its wallets export, beyond the ones every family shares (seed phrases, raw and extended private keys). */
  secretKeyForms?: readonly SecretKeyForm[];
  addresses: FamilyAddresses;
  /** Absent where the family's wallets do not derive from an xpub: the pool is seeded from an address list. */
  keys?: FamilyKeys;
  /** The family's payment URI; absent where wallets have no URI form chaingate relies on (the bare address). */
  paymentUri?: (payment: PaymentUriInput) => string;
  /** The family's chain reader, loaded only by `chaingate index` so serve never loads a chain client. */
  connect(): Promise<SourceFactory>;
  /**
   * The reader of a buyer's claims (POST /checkout/…/confirm): the ChainSource's receipt capability
   * without the indexer's start-up checks, one call per claim. Absent where the family has no payment
   * contract. A lazy import, so serve loads the chain client only at the first claim.
   */
  receipts?(): Promise<ReceiptReaderFactory>;
  /** Money out (src/families/sweep.ts): each step a lazy import, so `sweep sign` loads no chain client. */
  sweep?: {
    planner(): Promise<FamilySweepPlanner>;
    signer(): Promise<FamilySweepSigner>;
    sender(): Promise<FamilySweepSender>;
    /** Pure and offline, like the signer: what a transaction's bytes do (src/sweep/check-decoded.ts). */
    verifier(): Promise<FamilySweepVerifier>;
  };
}
