import { getAddress } from 'ethers';
import * as bitcoin from 'bitcoinjs-lib';
import { bitcoinJsNetwork } from './bitcoin-networks.ts';
import { isAddress as isSolanaAddress } from '@solana/web3.js';
import { Address as TonAddress } from '@ton/core';
import type { ChainFamily } from './registry.ts';
import { decodeBase58Check } from './base58check.ts';

// One address checker per family. Messages never repeat the address itself: addresses of buyers
// must not end up in logs, and an error message is the likeliest thing to be logged.

export class InvalidAddressError extends Error {
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

const TRON_PREFIX = 0x41;
const EVM_HEX_RE = /^0x[0-9a-fA-F]{40}$/;

/** Returns the address in its canonical form for the family and network, or throws InvalidAddressError. */
export function validateAddress(
  family: ChainFamily,
  address: string,
  testnet: boolean,
  options: ValidateAddressOptions = {},
): string {
  const input = address.trim();
  if (input === '') throw new InvalidAddressError(`empty ${family} address`);
  switch (family) {
    case 'evm':
      return validateEvm(input);
    case 'bitcoin':
      return validateBitcoin(input, testnet, options.network);
    case 'tron':
      return validateTron(input);
    case 'solana':
      return validateSolana(input);
    case 'ton':
      return validateTon(input, testnet, options.kind ?? 'deposit');
  }
}

function validateEvm(input: string): string {
  // getAddress alone would also accept ICAP ("XE…") forms, which no wallet pays to.
  if (!EVM_HEX_RE.test(input)) throw new InvalidAddressError('not an EVM address: expected 0x followed by 40 hex digits');
  try {
    // Mixed case must carry a valid EIP-55 checksum; all-lower and all-upper carry none and are accepted.
    return getAddress(input);
  } catch {
    throw new InvalidAddressError('EVM address has a wrong EIP-55 checksum (mixed case that does not match); check for a typo');
  }
}

function validateBitcoin(input: string, testnet: boolean, name: string | undefined): string {
  const network = bitcoinJsNetwork(testnet, name);
  try {
    // Re-encoding gives the canonical form (bech32 in lower case, as QR codes may upper-case it).
    return bitcoin.address.fromOutputScript(bitcoin.address.toOutputScript(input, network), network);
  } catch {
    const expected = name === 'REGTEST' ? 'bcrt1…, m…, n… or 2…' : testnet ? 'tb1…, m…, n… or 2…' : 'bc1…, 1… or 3…';
    const other = testnet ? bitcoin.networks.bitcoin : bitcoin.networks.testnet;
    const hint = belongsTo(input, other) ? ` (this is a ${testnet ? 'mainnet' : 'testnet'} address)` : '';
    throw new InvalidAddressError(`not a valid bitcoin ${testnet ? 'testnet' : 'mainnet'} address: expected ${expected}${hint}`);
  }
}

function belongsTo(input: string, network: bitcoin.Network): boolean {
  try {
    bitcoin.address.toOutputScript(input, network);
    return true;
  } catch {
    return false;
  }
}

function validateTron(input: string): string {
  // Nile and mainnet share the address format, so testnet does not matter here.
  if (input.length !== 34 || !input.startsWith('T')) {
    throw new InvalidAddressError('not a Tron address: expected 34 characters starting with T');
  }
  const payload = decodeBase58Check(input);
  if (!payload || payload.length !== 21 || payload[0] !== TRON_PREFIX) {
    throw new InvalidAddressError('not a valid Tron address: bad Base58Check checksum or prefix');
  }
  return input;
}

function validateSolana(input: string): string {
  // A base58 string decoding to exactly 32 bytes; devnet and mainnet share the format.
  if (!isSolanaAddress(input)) throw new InvalidAddressError('not a Solana address: expected 32 bytes in base58');
  return input;
}

function validateTon(input: string, testnet: boolean, kind: 'deposit' | 'contract'): string {
  let parsed: TonAddress;
  let testOnly = false;
  try {
    if (TonAddress.isFriendly(input)) {
      const friendly = TonAddress.parseFriendly(input);
      parsed = friendly.address;
      testOnly = friendly.isTestOnly;
    } else {
      parsed = TonAddress.parseRaw(input);
    }
  } catch {
    throw new InvalidAddressError('not a TON address: expected the friendly (EQ…/UQ…) or raw (0:<64 hex>) form');
  }
  // A friendly address flagged test-only was made for testnet; paying it on mainnet is a mistake.
  if (testOnly && !testnet) throw new InvalidAddressError('TON address is flagged testnet-only but mainnet was asked for');
  return parsed.toString({ urlSafe: true, bounceable: kind === 'contract', testOnly: testnet });
}
