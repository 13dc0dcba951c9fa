import { type SweepMessage, TOKEN_PROGRAM } from './sweep-message.ts';

// What a sweep or refund message can cost its fee payer, from its bytes alone: the planner states
// it as the plan's fee and the verifier reads it back, so both use this one reckoning
// (docs/sweeps/solana.md#fees).
//
// Besides the network fee (5,000 lamports a signature, plus a priority fee when a compute-unit
// price is set), a CreateIdempotent of the destination's associated token account makes the fee
// payer fund that account's rent-exempt minimum. That is counted as a fee, not as a pay: it is a
// cost of delivering tokens, it never reaches the destination as SOL it can spend (it stays locked
// in the token account until its owner closes it), and a token refund's buyer receives only the
// token. It is counted in full whether or not the account exists when the transaction lands (the
// bytes cannot tell): the most the transaction can cost. The planners leave the instruction out
// when the account already exists, so the stated fee is what the chain takes.

export const LAMPORTS_PER_SIGNATURE = 5_000n;
/** Agave's compute-budget defaults: 200,000 units per instruction, 1,400,000 per transaction at most. */
const DEFAULT_UNITS_PER_INSTRUCTION = 200_000n;
const MAX_UNITS = 1_400_000n;

/** Agave's Rent::default (3,480 lamports per byte-year, exempt at 2 years, 128 bytes of account overhead): every cluster uses it. */
export const rentExemptMinimum = (space: number): bigint => BigInt(128 + space) * 3_480n * 2n;

/** An associated token account's size: SPL Token's 165 bytes; Token-2022 adds the ImmutableOwner extension (170). */
export const tokenAccountSpace = (tokenProgram: string): number => (tokenProgram === TOKEN_PROGRAM ? 165 : 170);

export interface MessageFee {
  /** Signatures × 5,000 and the priority fee: what getFeeForMessage answers and the cluster's fee is. */
  network: bigint;
  /** The rent of every associated token account the message creates. */
  accounts: bigint;
  total: bigint;
}

export function messageFee(message: SweepMessage): MessageFee {
  let limit: bigint | null = null;
  let price = 0n;
  let accounts = 0n;
  for (const action of message.actions) {
    if (action.kind === 'compute-limit') limit = action.units;
    else if (action.kind === 'compute-price') price = action.microLamports;
    else if (action.kind === 'create-ata') accounts += rentExemptMinimum(tokenAccountSpace(action.tokenProgram));
  }
  const defaultUnits = DEFAULT_UNITS_PER_INSTRUCTION * BigInt(message.programInstructions);
  const rawUnits = limit ?? defaultUnits;
  const units = rawUnits > MAX_UNITS ? MAX_UNITS : rawUnits;
  // Agave rounds the priority fee up to the next lamport.
  const priority = (price * units + 999_999n) / 1_000_000n;
  const network = LAMPORTS_PER_SIGNATURE * BigInt(message.signers.length) + priority;
  return { network, accounts, total: network + accounts };
}
