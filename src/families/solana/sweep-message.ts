import { getCompiledTransactionMessageDecoder } from '@solana/kit';
import { decodeBase58 } from '../base58check.ts';
import { UsageError } from '../../domain/errors.ts';
import { findProgramAddress } from './ed25519-keys.ts';

// What a Solana sweep transaction may contain, read back from the exact message bytes that get
// signed. The planner writes these messages; the offline signer reads them here and signs only
// what it can account for, instruction by instruction: a plan edited by hand or by an attacker
// cannot slip in a transfer the summary does not show.

export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
export const ATA_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
export const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
export const TOKEN_PROGRAMS: readonly string[] = [TOKEN_PROGRAM, TOKEN_2022_PROGRAM];

/** Agave's limit on a serialized transaction (PACKET_DATA_SIZE − headers). */
export const MAX_TRANSACTION_BYTES = 1232;

/** The owner's associated token account for a mint under a token program (spl-associated-token-account's PDA). */
export function associatedTokenAddress(owner: string, mint: string, tokenProgram: string): string {
  const bytes = (a: string) => {
    const b = decodeBase58(a);
    if (b?.length !== 32) throw new UsageError('not a Solana address: expected 32 bytes in base58');
    return b;
  };
  return findProgramAddress([bytes(owner), bytes(tokenProgram), bytes(mint)], ATA_PROGRAM);
}

export type SweepAction =
  | { kind: 'transfer-sol'; from: string; to: string; lamports: bigint }
  | { kind: 'create-ata'; payer: string; ata: string; owner: string; mint: string; tokenProgram: string }
  | { kind: 'transfer-token'; program: string; source: string; mint: string; destination: string; authority: string; amount: bigint; decimals: number }
  | { kind: 'close-account'; program: string; account: string; destination: string; owner: string }
  /** Compute-budget SetComputeUnitLimit / SetComputeUnitPrice (micro-lamports a unit): what a priority fee costs. */
  | { kind: 'compute-limit'; units: bigint }
  | { kind: 'compute-price'; microLamports: bigint };

export interface SweepMessage {
  feePayer: string;
  /** The accounts that must sign, fee payer first, in the order their signatures go on the wire. */
  signers: string[];
  blockhash: string;
  actions: SweepAction[];
  /** How many instructions are not compute-budget ones (each may use 200,000 compute units by default). */
  programInstructions: number;
}

const u64 = (data: Uint8Array, offset: number) => new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(offset, true);
const u32 = (data: Uint8Array, offset: number) => new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(offset, true);

/** Decodes a legacy message and names each instruction, or throws saying which one is not a sweep's. */
export function readSweepMessage(bytes: Uint8Array, where: string): SweepMessage {
  let compiled: ReturnType<ReturnType<typeof getCompiledTransactionMessageDecoder>['decode']>;
  let end: number;
  try {
    [compiled, end] = getCompiledTransactionMessageDecoder().read(bytes, 0);
  } catch (err) {
    throw new UsageError(`${where}: the message does not decode as a Solana transaction message (${(err as Error).message})`);
  }
  // Bytes after the message would be signed too, and make the transaction one the cluster refuses.
  if (end !== bytes.length) throw new UsageError(`${where}: ${bytes.length - end} bytes follow the message`);
  if (compiled.version !== 'legacy') throw new UsageError(`${where}: a sweep is a legacy transaction; this one is version ${String(compiled.version)} (address lookup tables are not read offline)`);
  const keys: string[] = compiled.staticAccounts;
  const signerCount = compiled.header.numSignerAccounts;
  const actions: SweepAction[] = [];
  for (const [n, ix] of compiled.instructions.entries()) {
    const program = keys[ix.programAddressIndex];
    if ((ix.accountIndices ?? []).some((i) => i >= keys.length)) throw new UsageError(`${where}, instruction ${n}: names account ${Math.max(...(ix.accountIndices ?? []))} of ${keys.length}`);
    const accounts = (ix.accountIndices ?? []).map((i) => keys[i]!);
    const data = new Uint8Array(ix.data ?? new Uint8Array());
    const at = `${where}, instruction ${n}`;
    const refuse = (what: string): never => {
      throw new UsageError(`${at}: ${what}; a sweep holds only System transfers, token transferChecked and closeAccount, the destination's associated token account creation and compute-budget limits and prices`);
    };
    if (program === COMPUTE_BUDGET_PROGRAM) {
      if (accounts.length !== 0) refuse('a compute-budget instruction with accounts');
      const kind = data[0] === 2 && data.length === 5 ? 'compute-limit' : data[0] === 3 && data.length === 9 ? 'compute-price' : null;
      if (kind === null) refuse('a compute-budget instruction other than SetComputeUnitLimit or SetComputeUnitPrice');
      // The runtime refuses a transaction that sets either twice; refusing here keeps the fee reading single-valued.
      if (actions.some((a) => a.kind === kind)) refuse(`a second ${kind === 'compute-limit' ? 'SetComputeUnitLimit' : 'SetComputeUnitPrice'}`);
      actions.push(kind === 'compute-limit' ? { kind, units: BigInt(u32(data, 1)) } : { kind: 'compute-price', microLamports: u64(data, 1) });
    } else if (program === SYSTEM_PROGRAM) {
      if (data.length !== 12 || u32(data, 0) !== 2 || accounts.length !== 2) refuse('a System instruction other than Transfer');
      actions.push({ kind: 'transfer-sol', from: accounts[0]!, to: accounts[1]!, lamports: u64(data, 4) });
    } else if (program === ATA_PROGRAM) {
      if (data.length !== 1 || data[0] !== 1 || accounts.length !== 6) refuse('an associated-token-account instruction other than CreateIdempotent');
      const [payer, ata, owner, mint, system, tokenProgram] = accounts as [string, string, string, string, string, string];
      if (system !== SYSTEM_PROGRAM || !TOKEN_PROGRAMS.includes(tokenProgram)) refuse('CreateIdempotent with an unknown system or token program');
      actions.push({ kind: 'create-ata', payer, ata, owner, mint, tokenProgram });
    } else if (program !== undefined && TOKEN_PROGRAMS.includes(program)) {
      if (data[0] === 12 && data.length === 10 && accounts.length === 4) {
        const [source, mint, destination, authority] = accounts as [string, string, string, string];
        actions.push({ kind: 'transfer-token', program, source, mint, destination, authority, amount: u64(data, 1), decimals: data[9]! });
      } else if (data[0] === 9 && data.length === 1 && accounts.length === 3) {
        const [account, destination, owner] = accounts as [string, string, string];
        actions.push({ kind: 'close-account', program, account, destination, owner });
      } else {
        refuse(`token instruction ${data[0] ?? '(empty)'} with ${accounts.length} accounts`);
      }
    } else {
      refuse('a call to another program');
    }
  }
  if (signerCount === 0 || keys.length === 0) throw new UsageError(`${where}: the message names no fee payer`);
  const programInstructions = actions.filter((a) => a.kind !== 'compute-limit' && a.kind !== 'compute-price').length;
  return { feePayer: keys[0]!, signers: keys.slice(0, signerCount), blockhash: compiled.lifetimeToken, actions, programInstructions };
}
