import { address, getAddressEncoder, getProgramDerivedAddress } from '@solana/web3.js';

// Associated token accounts (spl-associated-token-account): the PDA of [owner, token program,
// mint] under the ATA program. A USDC deposit lands in the owner's ATA of the classic Token program;
// a Token-2022 mint's in the ATA under Token-2022. Both are watched, so either kind is seen.
const ATA_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
const TOKEN_PROGRAMS = ['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb'];

export async function associatedTokenAccounts(owner: string, mint: string): Promise<string[]> {
  const encode = getAddressEncoder();
  const out: string[] = [];
  for (const program of TOKEN_PROGRAMS) {
    const [pda] = await getProgramDerivedAddress({
      programAddress: address(ATA_PROGRAM),
      seeds: [encode.encode(address(owner)), encode.encode(address(program)), encode.encode(address(mint))],
    });
    out.push(pda);
  }
  return out;
}
