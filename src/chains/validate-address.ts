import { FAMILIES } from '../indexers/families.ts';
import { InvalidAddressError, type ValidateAddressOptions } from './family-addresses.ts';
import type { ChainFamily } from './registry.ts';

/** Returns the address in its canonical form for the family and network, or throws InvalidAddressError (family rules: src/indexers/<family>/address.ts). */
export function validateAddress(family: ChainFamily, address: string, testnet: boolean, options: ValidateAddressOptions = {}): string {
  const input = address.trim();
  if (input === '') throw new InvalidAddressError(`empty ${family} address`);
  return FAMILIES[family].addresses.validate(input, testnet, options);
}
