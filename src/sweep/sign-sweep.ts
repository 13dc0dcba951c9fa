import { readFileSync, statSync } from 'node:fs';
import { CHAIN_DEFAULTS } from '../chains/chain-defaults.ts';
import { InvalidAddressError, UsageError } from '../domain/errors.ts';
import { isDecimalString, parseUnits } from '../domain/money.ts';
import { FAMILIES, validateAddress } from '../families/families.ts';
import type { SignedSweep, SweepKey, SweepPlan } from '../families/sweep.ts';
import { checkDecoded, verifySigned } from './check-decoded.ts';
import { readPlanFile, writeSignedFile } from './plan-file.ts';
import { readWalletSecret, type WalletSecret } from './seed-file.ts';
import { describeReading } from './reading-summary.ts';
import { totalsJson } from './summary.ts';

// `chaingate sweep sign`, on the offline machine (docs/sweeps.md#the-offline-machine). It reads a
// plan file and the wallet secret and writes signed.json: no configuration, no database, no
// network, and of the family only its sweep-sign.ts and sweep-verify.ts (test/integration/sweep-offline.test.ts
// proves it under strace). Every deposit's key is derived and checked against the plan's address
// before anything is signed. The summary printed is read from the transactions themselves by the
// family's verifier, never from the plan's text; the plan's text must agree with it, the fees must
// be within bounds (or --max-fee), and the destination must be one the operator expects.

/** Children searched for an address from a list file (no derivation index). */
const SEARCH_LIMIT = 1000;

export interface SignSweepInput {
  plan: string;
  out: string;
  seedFile?: string;
  seedStdin?: boolean;
  /** An address, or a file of allowed destinations (one per line, `#` comments) kept beside the seed. */
  expectTo?: string;
  /** Coin units of the native coin: the most the plan may pay in fees, replacing the default bounds. */
  maxFee?: string;
  yes?: boolean;
}

export interface SignSweepIo {
  /** Where the summary goes (stderr, so stdout stays for --json). */
  say(text: string): void;
  /** Asks on the terminal; null when there is none to ask on. */
  confirm: ((question: string) => Promise<boolean>) | null;
  readStdin?: () => string;
}

function canonical(plan: SweepPlan, value: string, what: string): string {
  try {
    return validateAddress(plan.family, value, plan.testnet, { network: plan.network });
  } catch (err) {
    if (err instanceof InvalidAddressError) throw new UsageError(`${what}: ${err.message}`);
    throw err;
  }
}

/** `--expect-to`: one address, or the addresses of a file (one per line; blank lines and `#` comments skipped). */
function expectedDestinations(plan: SweepPlan, value: string): string[] {
  let isFile = false;
  try {
    isFile = statSync(value).isFile();
  } catch {
    isFile = false;
  }
  if (!isFile) return [canonical(plan, value, '--expect-to')];
  const lines = readFileSync(value, 'utf8')
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter((l) => l.length > 0);
  if (lines.length === 0) throw new UsageError(`--expect-to ${value}: the file lists no address`);
  // A list may hold several chains' cold addresses: the ones this chain cannot read are not for it.
  const mine: string[] = [];
  for (const line of lines) {
    try {
      mine.push(validateAddress(plan.family, line, plan.testnet, { network: plan.network }));
    } catch (err) {
      if (!(err instanceof InvalidAddressError)) throw err;
    }
  }
  if (mine.length === 0) throw new UsageError(`--expect-to ${value}: none of its ${lines.length} addresses is a ${plan.chain} ${plan.network} address`);
  return mine;
}

function maxFeeOf(plan: SweepPlan, value: string | undefined): bigint | null {
  if (value === undefined) return null;
  const native = CHAIN_DEFAULTS[plan.chain].native;
  if (!isDecimalString(value)) throw new UsageError(`--max-fee ${value}: not an amount of ${native.symbol} such as 0.001`);
  try {
    return parseUnits(value, native.decimals);
  } catch {
    throw new UsageError(`--max-fee ${value}: ${native.symbol} has ${native.decimals} decimals`);
  }
}

export async function signSweep(input: SignSweepInput, io: SignSweepIo): Promise<{ signed: SignedSweep; plan: SweepPlan; totals: ReturnType<typeof totalsJson> }> {
  const plan = readPlanFile(input.plan);
  const chain = CHAIN_DEFAULTS[plan.chain];
  if (chain.family !== plan.family) throw new UsageError(`${input.plan}: ${plan.chain} is a ${chain.family} chain, not ${plan.family}`);
  const family = FAMILIES[plan.family];
  if (!family.sweep) throw new UsageError(`sweeps are not yet supported on ${plan.chain}`);
  if (input.yes && input.expectTo === undefined) {
    throw new UsageError('--yes signs without asking, so it needs --expect-to <address or file>: the destination is the one thing a changed plan file could redirect');
  }
  if (canonical(plan, plan.to, 'the plan\'s destination') !== plan.to) throw new UsageError(`${input.plan}: the destination is not written in its canonical form`);
  if (input.expectTo !== undefined && !expectedDestinations(plan, input.expectTo).includes(plan.to)) {
    throw new UsageError(`the plan sends to ${plan.to}, which --expect-to ${input.expectTo} does not name: refused, nothing signed`);
  }
  const maxFee = maxFeeOf(plan, input.maxFee);
  // What the transactions do, read from their payloads, checked against the plan's text and the fee bounds.
  const verifier = await family.sweep.verifier();
  const reading = checkDecoded(plan, plan.transactions.map((t) => verifier.decodeUnsigned(plan, t)), { maxFee });
  const secret: WalletSecret = readWalletSecret({ file: input.seedFile, stdin: input.seedStdin }, io.readStdin);
  const signer = await family.sweep.signer();
  const keys = new Map<string, SweepKey>();
  try {
    for (const deposit of plan.deposits) {
      let key: SweepKey;
      if (secret.kind === 'seed') key = signer.deriveKey(secret.seed, deposit, plan, SEARCH_LIMIT);
      else if (signer.deriveKeyFromAccount) key = signer.deriveKeyFromAccount(secret.key, deposit, plan, SEARCH_LIMIT);
      else throw new UsageError(`${plan.chain} deposits are signed from the wallet seed, not an account key: give the BIP39 phrase or the seed`);
      if (key.address !== deposit.address) throw new UsageError(`deposit ${deposit.derivationIndex === null ? '(list file)' : `#${deposit.derivationIndex}`}: the key derived is not the plan's address for it`);
      keys.set(deposit.address, key);
    }
    // A fee payer signs too (EVM, Solana): its key comes from the same secret, searched by its address.
    if (plan.feePayer !== null && plan.transactions.some((t) => t.signers.includes(plan.feePayer!)) && !keys.has(plan.feePayer)) {
      const payer = { address: plan.feePayer, derivationIndex: null, source: 'fee-payer' };
      const key = secret.kind === 'seed' ? signer.deriveKey(secret.seed, payer, plan, SEARCH_LIMIT) : signer.deriveKeyFromAccount?.(secret.key, payer, plan, SEARCH_LIMIT);
      if (!key || key.address !== plan.feePayer) throw new UsageError('the fee payer\'s key is not derived by this secret');
      keys.set(plan.feePayer, key);
    }
    for (const tx of plan.transactions) {
      const missing = tx.signers.filter((s) => !keys.has(s));
      if (missing.length > 0) throw new UsageError(`${tx.id}: needs ${missing.length} signer${missing.length === 1 ? '' : 's'} outside the plan's deposits and fee payer: refused`);
    }

    io.say(describeReading(plan, reading));
    if (!input.yes) {
      if (!io.confirm) throw new UsageError('no terminal to ask on: check the summary above and pass --yes (and --expect-to <address>) to sign');
      if (!(await io.confirm(`sign ${plan.transactions.length} transaction${plan.transactions.length === 1 ? '' : 's'} sending to ${plan.to}? [y/N] `))) {
        throw new UsageError('not signed: the answer was not yes');
      }
    }
    const txs = signer.sign(plan, keys);
    const planned = plan.transactions.map((t) => t.id).join(',');
    if (txs.map((t) => t.id).join(',') !== planned) throw new Error(`the ${plan.family} signer returned other transactions than the plan's (${planned})`);
    const signed: SignedSweep = { format: 'chaingate-sweep-signed/1', planId: plan.id, chain: plan.chain, network: plan.network, testnet: plan.testnet, transactions: txs };
    // What was signed is read back exactly as the broadcast will read it: the same transactions, the same txids.
    verifySigned(plan, signed, verifier, input.out);
    writeSignedFile(input.out, signed);
    return { signed, plan, totals: totalsJson(plan) };
  } finally {
    for (const key of keys.values()) key.privateKey.fill(0);
    if (secret.kind === 'seed') secret.seed.fill(0);
  }
}
