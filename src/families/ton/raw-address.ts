import { Address } from '@ton/core';

/** The raw form ("0:ABCD…", upper case) of a TON address given in any form; the key the reader matches on. */
export const raw = (address: string): string => Address.parse(address).toRawString().toUpperCase();

/** A base64 hash (toncenter's form) as lower-case hex (the ledger's form). */
export const hex = (base64: string): string => Buffer.from(base64, 'base64').toString('hex');
