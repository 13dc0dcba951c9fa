import { createHash } from 'node:crypto';
import { chmodSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { CHAIN_SLUGS, type ChainFamily } from '../chains/slugs.ts';
import { UsageError } from '../domain/errors.ts';
import { familyNames } from '../families/families.ts';
import type { SignedSweep, SweepPlan } from '../families/sweep.ts';

// plan.json and signed.json (docs/sweeps.md#the-files): read, checked and written here only. A
// plan's id is the SHA-256 of its canonical JSON (keys sorted, no whitespace) without the id
// itself: unkeyed, so it catches an accidental edit, not an attacker who recomputes it. What stops
// a tampered plan is the signer reading the transactions' own bytes (docs/sweeps.md#what-the-signer-checks).

const atomic = z.string().regex(/^(0|[1-9]\d*)$/, 'an amount in atomic units, as a decimal string');
const holding = z.strictObject({ symbol: z.string().min(1), token: z.string().nullable(), decimals: z.int().min(0).max(36), amount: atomic });

/** plan.json's shape, for the families given (a test hands it one more). */
export function planSchemaFor(families: [ChainFamily, ...ChainFamily[]]) {
  return z.strictObject({
    format: z.literal('chaingate-sweep-plan/1'),
    id: z.string().regex(/^[0-9a-f]{64}$/),
    kind: z.enum(['sweep', 'refund']),
    chain: z.enum(CHAIN_SLUGS),
    family: z.enum(families),
    network: z.string().min(1),
    testnet: z.boolean(),
    to: z.string().min(1),
    feePayer: z.string().nullable(),
    createdAt: z.string(),
    deposits: z.array(
      z.strictObject({
        address: z.string().min(1),
        derivationIndex: z.int().min(0).nullable(),
        source: z.string().min(1),
        holdings: z.array(holding),
        moves: z.array(holding),
        fee: atomic,
        leftBehind: z.array(z.strictObject({ holding, reason: z.string() })),
      }),
    ),
    refund: z.strictObject({ paymentId: z.string().min(1), symbol: z.string().min(1), token: z.string().nullable(), decimals: z.int().min(0).max(36), amount: atomic }).optional(),
    skipped: z.array(z.strictObject({ address: z.string(), reason: z.string() })),
    transactions: z.array(
      z.strictObject({
        id: z.string().regex(/^tx-\d+$/),
        signers: z.array(z.string()),
        deposits: z.array(z.string()),
        after: z.array(z.string()),
        payload: z.unknown(),
      }),
    ),
  });
}

const planSchema = planSchemaFor(familyNames());

const signedSchema = z.strictObject({
  format: z.literal('chaingate-sweep-signed/1'),
  planId: z.string().regex(/^[0-9a-f]{64}$/),
  chain: z.enum(CHAIN_SLUGS),
  network: z.string().min(1),
  testnet: z.boolean(),
  transactions: z.array(z.strictObject({ id: z.string().regex(/^tx-\d+$/), raw: z.string().min(1), txid: z.string().min(1) })).min(1),
});

/** JSON with object keys sorted at every level: the same plan always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The id of a plan: SHA-256 (hex) of its canonical JSON without `id`. */
export function planId(plan: Omit<SweepPlan, 'id'> | SweepPlan): string {
  const { id: _id, ...rest } = plan as SweepPlan;
  return createHash('sha256').update(canonicalJson(rest)).digest('hex');
}

function readJson(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${path} is not JSON: not a ${what} written by chaingate`);
  }
}

function issue(error: z.ZodError): string {
  const first = error.issues[0];
  return first ? `${first.path.join('.') || '(root)'}: ${first.message}` : 'unexpected shape';
}

/** Checks a parsed plan's shape and its id; throws UsageError saying what is wrong. */
export function checkPlan(raw: unknown, from: string): SweepPlan {
  if (raw && typeof raw === 'object' && (raw as { format?: unknown }).format === 'chaingate-sweep-signed/1') {
    throw new UsageError(`${from} is a signed sweep (signed.json), not a plan`);
  }
  const parsed = planSchema.safeParse(raw);
  if (!parsed.success) throw new UsageError(`${from} is not a valid sweep plan (${issue(parsed.error)})`);
  const plan = parsed.data as SweepPlan;
  // Over the file as read: a field zod would not know of would still change the id.
  const expected = planId(raw as SweepPlan);
  if (expected !== plan.id) {
    throw new UsageError(`${from} was changed after \`sweep plan\` wrote it: its content hashes to ${expected.slice(0, 16)}…, not its id ${plan.id.slice(0, 16)}…; make a new plan`);
  }
  return plan;
}

export function readPlanFile(path: string): SweepPlan {
  return checkPlan(readJson(path, 'sweep plan'), path);
}

export function readSignedFile(path: string): SignedSweep {
  return checkSigned(readJson(path, 'signed sweep'), path);
}

/** A signed file given as text (the dashboard's upload), named `name` in what it says. */
export function parseSignedText(text: string, name: string): SignedSweep {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new UsageError(`${name} is not JSON: not a signed sweep written by \`chaingate sweep sign\``);
  }
  return checkSigned(raw, name);
}

function checkSigned(raw: unknown, path: string): SignedSweep {
  if (raw && typeof raw === 'object' && (raw as { format?: unknown }).format === 'chaingate-sweep-plan/1') {
    throw new UsageError(`${path} is an unsigned plan: sign it first with \`chaingate sweep sign\` on the offline machine`);
  }
  const parsed = signedSchema.safeParse(raw);
  if (!parsed.success) throw new UsageError(`${path} is not a valid signed sweep (${issue(parsed.error)})`);
  return parsed.data as SignedSweep;
}

/** Writes a file whole or not at all (temporary file, then rename), private to the owner when `secret`. */
export function writeFileAtomic(path: string, text: string, mode: number): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}

export function writePlanFile(path: string, plan: SweepPlan): void {
  writeFileAtomic(path, `${JSON.stringify(plan, null, 2)}\n`, 0o644);
}

/** signed.json holds no secret, but it is a spend ready to go: 0600 so nobody else can read or swap it. */
export function writeSignedFile(path: string, signed: SignedSweep): void {
  writeFileAtomic(path, `${JSON.stringify(signed, null, 2)}\n`, 0o600);
}
