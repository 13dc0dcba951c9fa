import {
  address,
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Blockhash,
  type Instruction,
} from '@solana/kit';
import { z } from 'zod';
import type { Holding } from '../sweep.ts';
import { UsageError } from '../../domain/errors.ts';
import { pubkey, u64, type SolanaCall } from './sweep-rpc.ts';
import { SYSTEM_PROGRAM, TOKEN_PROGRAMS } from './sweep-message.ts';

// What the sweep and refund planners read from the cluster (accounts, token accounts, a
// blockhash, a message's fee) and how they compile a legacy message: one place for both.

export const COMMITMENT = 'confirmed';
const ACCOUNTS_PER_CALL = 100; // getMultipleAccounts' limit

const AccountSchema = z.looseObject({ lamports: u64, owner: pubkey, executable: z.boolean(), space: z.number().int().nonnegative().optional(), data: z.unknown() }).nullable();
export const MultipleAccountsSchema = z.looseObject({ value: z.array(AccountSchema) });
// Agave's UiTokenAccount (account-decoder/src/parse_token.rs), jsonParsed.
export const TokenAccountsSchema = z.looseObject({
  value: z.array(
    z.looseObject({
      pubkey,
      account: z.looseObject({
        lamports: u64,
        owner: pubkey,
        data: z.looseObject({
          parsed: z.looseObject({
            type: z.string(),
            info: z.looseObject({
              mint: pubkey,
              owner: pubkey,
              state: z.string(),
              isNative: z.boolean().optional(),
              closeAuthority: pubkey.optional(),
              tokenAmount: z.looseObject({ amount: z.string().regex(/^\d+$/), decimals: z.number().int().nonnegative() }),
            }),
          }),
        }),
      }),
    }),
  ),
});
const BlockhashSchema = z.looseObject({ value: z.looseObject({ blockhash: pubkey, lastValidBlockHeight: u64 }) });
const FeeSchema = z.looseObject({ value: u64.nullable() });

export type Account = z.infer<typeof AccountSchema>;
export type TokenAccount = z.infer<typeof TokenAccountsSchema>['value'][number];
export type Lifetime = { blockhash: Blockhash; lastValidBlockHeight: bigint };

async function inChunks<T, R>(items: T[], size: number, run: (chunk: T[]) => Promise<R[]>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await run(items.slice(i, i + size))));
  return out;
}

export const accounts = (call: SolanaCall, keys: string[]) =>
  inChunks(keys, ACCOUNTS_PER_CALL, async (chunk) => {
    const res = await call('getMultipleAccounts', [chunk, { encoding: 'base64', commitment: COMMITMENT, dataSlice: { offset: 0, length: 0 } }], MultipleAccountsSchema);
    if (res.value.length !== chunk.length) throw new UsageError(`getMultipleAccounts answered ${res.value.length} accounts for ${chunk.length}`);
    return res.value;
  });

/** Every token account an owner has, under the Token and Token-2022 programs. */
export async function tokenAccountsOf(call: SolanaCall, owner: string): Promise<TokenAccount[]> {
  const lists = await Promise.all(TOKEN_PROGRAMS.map((programId) => call('getTokenAccountsByOwner', [owner, { programId }, { encoding: 'jsonParsed', commitment: COMMITMENT }], TokenAccountsSchema)));
  return lists.flatMap((l) => l.value);
}

/** A plain wallet: owned by the System program, no data. Only such an account can send with a System transfer. */
export const isWallet = (a: NonNullable<Account>) => a.owner === SYSTEM_PROGRAM && !a.executable && (a.space ?? 0) === 0;

export const hold = (symbol: string, token: string | null, decimals: number, amount: bigint): Holding => ({ symbol, token, decimals, amount: amount.toString() });

export async function latestLifetime(call: SolanaCall): Promise<Lifetime> {
  const latest = await call('getLatestBlockhash', [{ commitment: COMMITMENT }], BlockhashSchema);
  return { blockhash: latest.value.blockhash as Blockhash, lastValidBlockHeight: latest.value.lastValidBlockHeight };
}

/**
 * The cluster's fee for a compiled message (base64) must be the one read from its bytes
 * (sweep-fee.ts), which the plan states and the signer checks; refuses a blockhash the cluster no
 * longer knows, and a cluster charging otherwise (another lamports-per-signature).
 */
export async function checkClusterFee(call: SolanaCall, base64: string, reckoned: bigint): Promise<void> {
  const fee = (await call('getFeeForMessage', [base64, { commitment: COMMITMENT }], FeeSchema)).value;
  if (fee === null) throw new UsageError('the cluster no longer knows the blockhash just read (getFeeForMessage answered null): plan again');
  if (fee !== reckoned) throw new UsageError(`the cluster charges ${fee} lamports for the message, not the ${reckoned} read from its bytes (5,000 a signature): refused`);
}

export const rentFor = (call: SolanaCall, space: number) => call('getMinimumBalanceForRentExemption', [space], u64);

/** A legacy message's bytes and its signed size (compact-u16 count, 64 bytes a signature, the message). */
export function compileLegacy(feePayer: string, lifetime: Lifetime, instructions: Instruction[]): { bytes: Uint8Array; size: number } {
  const message = pipe(
    createTransactionMessage({ version: 'legacy' }),
    (m) => setTransactionMessageFeePayer(address(feePayer), m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const compiled = compileTransaction(message);
  const bytes = new Uint8Array(compiled.messageBytes);
  return { bytes, size: 1 + 64 * Object.keys(compiled.signatures).length + bytes.length };
}
