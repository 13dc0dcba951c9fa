import { CHAIN_DEFAULTS } from '../chains/chain-defaults.ts';
import { CHAIN_SLUGS } from '../chains/slugs.ts';
import type { Common } from '../common.ts';
import { ALL_POINTS, can, DashboardError, roleOn, type Role } from '../domain/dashboard-roles.ts';
import { GatewayError, UsageError } from '../domain/errors.ts';
import type { SweepPlan } from '../families/sweep.ts';
import { insertAudit, recordAudit, type AuditInput } from '../store/audit-log.ts';
import type { Executor } from '../store/executor.ts';
import { moneyPlan, moneyPlans, planBody, type MoneyPlanRow } from '../store/money-plans.ts';
import { poolReader } from '../store/raw-sql.ts';
import { findPayment, type StoredPayment } from '../store/records.ts';
import { refundOfPlan, refundsOfPayment, refundState, type RefundRow } from '../store/refunds.ts';
import { broadcastSweep, type BroadcastResult } from '../sweep/broadcast-sweep.ts';
import { cancelSweepPlan } from '../sweep/cancel-plan.ts';
import { checkPlan } from '../sweep/plan-file.ts';
import { planRefund, refundOffer, type RefundOffer } from '../sweep/plan-refund.ts';
import { planSweep, sweepNetwork } from '../sweep/plan-sweep.ts';
import { describePlan } from '../sweep/summary.ts';
import type { DashboardPrincipal } from './dashboard-session.ts';
import type { Client } from './dashboard-tokens.ts';

// Refunds and sweeps from the dashboard (docs/dashboard.md#refunds-and-sweeps): the same use cases
// as `refund plan|broadcast|cancel` and `sweep plan|broadcast|cancel`, so the same checks and the
// same serialised, verified broadcast; keys never come here (the plan is signed offline with
// `chaingate sweep sign`). A refund belongs to its payment's point; a sweep empties deposits of
// every point, so it needs a grant on every point. Moving money needs the `money` permission
// (managers, owners); every step writes its audit row inside the use case's own write.

export type MoneyState = 'PLANNED' | 'PENDING' | 'CONFIRMED' | 'FINAL' | 'FAILED' | 'CANCELLED' | 'EXPIRED';

export interface MoneyPlanView extends MoneyPlanRow {
  state: MoneyState;
  /** Whether this user may download, upload, broadcast and cancel it. */
  canAct: boolean;
}

export interface MoneyPlanDetail extends MoneyPlanView {
  plan: SweepPlan;
  /** The plan in words, as `sweep plan` prints it. */
  summary: string;
  /** The file name the download offers, and the exact offline command that signs it. */
  fileName: string;
  signCommand: string;
  refund: RefundRow | null;
}

function notFound(what: string): GatewayError {
  return new GatewayError('NOT_FOUND', `No such ${what}`);
}

function forbidden(role: Role): DashboardError {
  return new DashboardError('FORBIDDEN', 403, `A ${role} may not move money; managers and owners may`);
}

function actor(principal: DashboardPrincipal, client: Client, action: string, pointId: string | null, details: Record<string, unknown>): AuditInput {
  return { userId: principal.userId, actor: principal.email, ip: client.ip, userAgent: client.userAgent, action, pointId, details };
}

/** The role that decides over a plan: its payment's point for a refund, every point for a sweep. */
function roleOver(principal: DashboardPrincipal, row: Pick<MoneyPlanRow, 'kind' | 'merchantId'>): Role | null {
  if (row.kind === 'refund') return row.merchantId === null ? null : roleOn(principal.grants, row.merchantId);
  return principal.grants.find((g) => g.pointId === ALL_POINTS)?.role ?? null;
}

function stateOf(row: MoneyPlanRow, now: Date): MoneyState {
  const s = refundState(row.txs, { expiresAt: row.expiresAt, cancelledAt: row.cancelledAt }, now);
  return row.kind === 'sweep' && s === 'CONFIRMED' ? 'FINAL' : s;
}

function viewOf(row: MoneyPlanRow, role: Role, now: Date): MoneyPlanView {
  return { ...row, state: stateOf(row, now), canAct: can(role, 'money') };
}

/** A plan the user may see (404 otherwise: a point not granted does not exist for them), and their role over it. */
async function grantedPlan(common: Common, principal: DashboardPrincipal, planId: string): Promise<{ row: MoneyPlanRow; role: Role }> {
  const row = /^[0-9a-f]{64}$/.test(planId) ? await moneyPlan(poolReader(common.db), planId) : null;
  const role = row ? roleOver(principal, row) : null;
  if (!row || !role) throw notFound('refund or sweep plan');
  return { row, role };
}

async function actingPlan(common: Common, principal: DashboardPrincipal, planId: string): Promise<MoneyPlanRow> {
  const { row, role } = await grantedPlan(common, principal, planId);
  if (!can(role, 'money')) throw forbidden(role);
  return row;
}

async function grantedPayment(common: Common, principal: DashboardPrincipal, paymentId: string): Promise<{ payment: StoredPayment; role: Role }> {
  const payment = /^[A-Za-z0-9_-]{1,64}$/.test(paymentId) ? await findPayment(poolReader(common.db), paymentId) : null;
  const role = payment ? roleOn(principal.grants, payment.merchantId) : null;
  if (!payment || !role) throw notFound('payment');
  return { payment, role };
}

export interface RefundPageData {
  payment: StoredPayment;
  offer: RefundOffer;
  refunds: (RefundRow & { stateLabel: string })[];
  canAct: boolean;
}

/** A payment's refunds and what a new one may cover (anyone who may read the point). */
export async function refundPageFor(common: Common, principal: DashboardPrincipal, paymentId: string): Promise<RefundPageData> {
  const { payment, role } = await grantedPayment(common, principal, paymentId);
  const refunds = await refundsOfPayment(poolReader(common.db), payment.id);
  return { payment, offer: await refundOffer(common, payment), refunds: refunds.map((r) => ({ ...r, stateLabel: r.state })), canAct: can(role, 'money') };
}

export interface RefundForm {
  to: string;
  /** Empty: the over-payment, as `refund plan` without --amount. */
  amount: string;
  feePayer: string;
  /** Empty: the payment's own deposit. */
  fromAddress: string;
}

/** `refund plan` from the dashboard: recorded (with its audit row), not written to a file; downloaded from the plan's page. */
export async function planRefundFromDashboard(common: Common, principal: DashboardPrincipal, paymentId: string, form: RefundForm, client: Client): Promise<{ planId: string; refundId: string }> {
  const { payment, role } = await grantedPayment(common, principal, paymentId);
  if (!can(role, 'money')) throw forbidden(role);
  if (form.to.trim() === '') throw new UsageError("the buyer's address is required");
  const result = await planRefund(common, {
    payment: payment.id,
    to: form.to.trim(),
    amount: form.amount.trim() === '' ? undefined : form.amount.trim(),
    fromAddress: form.fromAddress.trim() === '' ? undefined : form.fromAddress.trim(),
    feePayer: form.feePayer.trim() === '' ? null : form.feePayer.trim(),
    out: null,
    inWrite: (x, plan, refundId) => insertAudit(x, actor(principal, client, 'refund.plan', payment.merchantId, { paymentId: payment.id, refundId, planId: plan.id, amount: plan.refund!.amount, symbol: plan.refund!.symbol, to: plan.to })),
  });
  return { planId: result.plan.id, refundId: result.refundId };
}

/** One plan with its summary and the offline command that signs it. */
export async function moneyPlanFor(common: Common, principal: DashboardPrincipal, planId: string, now = new Date()): Promise<MoneyPlanDetail> {
  const { row, role } = await grantedPlan(common, principal, planId);
  const body = await planBody(poolReader(common.db), row.id);
  const plan = checkPlan(JSON.parse(body ?? 'null'), `the recorded plan ${row.id.slice(0, 16)}…`);
  const native = CHAIN_DEFAULTS[plan.chain].native;
  const fileName = `${plan.kind}-plan-${plan.id.slice(0, 16)}.json`;
  const signedName = `${plan.kind}-signed-${plan.id.slice(0, 16)}.json`;
  return {
    ...viewOf(row, role, now),
    plan,
    summary: describePlan(plan, native.decimals, native.symbol),
    fileName,
    signCommand: `chaingate sweep sign --plan ${fileName} --out ${signedName} --seed-file <path> --expect-to ${plan.to}`,
    refund: plan.kind === 'refund' ? await refundOfPlan(poolReader(common.db), plan.id) : null,
  };
}

/** The plan file to sign offline, byte for byte as `sweep plan` writes it; the download is audited. */
export async function planFileFor(common: Common, principal: DashboardPrincipal, planId: string, client: Client): Promise<{ fileName: string; text: string }> {
  const row = await actingPlan(common, principal, planId);
  const detail = await moneyPlanFor(common, principal, row.id);
  await recordAudit(common.db, actor(principal, client, `${row.kind}.download`, row.merchantId, { planId: row.id }));
  return { fileName: detail.fileName, text: `${JSON.stringify(detail.plan, null, 2)}\n` };
}

/** The most a signed file may weigh when uploaded (a plan of many deposits signs into a few hundred KB at most). */
export const SIGNED_UPLOAD_LIMIT = 1024 * 1024;

/**
 * `refund broadcast` / `sweep broadcast` of an uploaded signed file: verified against the recorded
 * plan, recorded under row locks (two users at once: the second finds the first's rows and sends
 * the same bytes, so the money moves once), sent once; `serve` follows it to finality.
 */
export async function broadcastFromDashboard(common: Common, principal: DashboardPrincipal, planId: string, signedText: string, client: Client): Promise<BroadcastResult> {
  const row = await actingPlan(common, principal, planId);
  if (signedText.trim() === '') throw new UsageError('choose the signed file `chaingate sweep sign` wrote');
  if (Buffer.byteLength(signedText) > SIGNED_UPLOAD_LIMIT) throw new UsageError(`the signed file is larger than ${SIGNED_UPLOAD_LIMIT} bytes: not a signed file of this plan`);
  return broadcastSweep(common, {
    kind: row.kind,
    signed: 'the uploaded file',
    signedText,
    planId: row.id,
    wait: false,
    inWrite: (x: Executor, plan) => insertAudit(x, actor(principal, client, `${row.kind}.broadcast`, row.merchantId, { planId: plan.id, paymentId: row.paymentId })),
  });
}

/** `refund cancel` / `sweep cancel`: a plan never broadcast gives back what it reserved. */
export async function cancelFromDashboard(common: Common, principal: DashboardPrincipal, planId: string, client: Client): Promise<void> {
  const row = await actingPlan(common, principal, planId);
  await cancelSweepPlan(common, row.kind, row.id, new Date(), (x, id) => insertAudit(x, actor(principal, client, `${row.kind}.cancel`, row.merchantId, { planId: id, paymentId: row.paymentId })));
}

export interface SweepsPageData {
  plans: MoneyPlanView[];
  /** Whether the user may plan a sweep (money on every point). */
  canSweep: boolean;
  /** The chains with sweeps on this deployment (enabled, a family that sweeps). */
  chains: { slug: string; name: string }[];
}

/** Every plan a user may see: sweeps to those granted every point, refunds of the points they read. */
export async function sweepsPageFor(common: Common, principal: DashboardPrincipal, now = new Date()): Promise<SweepsPageData> {
  const all = principal.grants.find((g) => g.pointId === ALL_POINTS)?.role ?? null;
  const rows = await moneyPlans(poolReader(common.db), { limit: 200, merchantIds: all ? null : principal.grants.map((g) => g.pointId) });
  const plans: MoneyPlanView[] = [];
  for (const row of rows) {
    const role = roleOver(principal, row);
    if (role) plans.push(viewOf(row, role, now));
  }
  return { plans, canSweep: all !== null && can(all, 'money'), chains: sweepChains(common) };
}

function sweepChains(common: Common): { slug: string; name: string }[] {
  const out: { slug: string; name: string }[] = [];
  for (const slug of CHAIN_SLUGS) {
    try {
      const { network } = sweepNetwork(common, slug, false);
      out.push({ slug, name: `${CHAIN_DEFAULTS[slug].name} ${network.network}` });
    } catch {
      // switched off, or a family without sweeps: not offered
    }
  }
  return out;
}

export interface SweepForm {
  chain: string;
  testnet: boolean;
  to: string;
  feePayer: string;
  /** `--min` values, one a line or comma-separated. */
  min: string;
}

/** `sweep plan` from the dashboard: an owner or manager of every point. */
export async function planSweepFromDashboard(common: Common, principal: DashboardPrincipal, form: SweepForm, client: Client): Promise<{ planId: string } | { planId: null; reason: string }> {
  const all = principal.grants.find((g) => g.pointId === ALL_POINTS)?.role ?? null;
  if (!all) throw new DashboardError('FORBIDDEN', 403, 'A sweep empties deposits of every point: it needs a role on every point');
  if (!can(all, 'money')) throw forbidden(all);
  if (!(CHAIN_SLUGS as readonly string[]).includes(form.chain)) throw new UsageError(`no chain ${JSON.stringify(form.chain)}`);
  if (form.to.trim() === '') throw new UsageError('the cold wallet address is required');
  const result = await planSweep(common, {
    chain: form.chain,
    testnet: form.testnet,
    to: form.to.trim(),
    feePayer: form.feePayer.trim() === '' ? null : form.feePayer.trim(),
    min: form.min.split(/[\s,]+/).filter((m) => m !== ''),
    accountKeys: [],
    masterFingerprint: null,
    out: null,
    inWrite: (x, plan) => insertAudit(x, actor(principal, client, 'sweep.plan', null, { planId: plan.id, chain: plan.chain, to: plan.to, transactions: plan.transactions.length })),
  });
  return result.written ? { planId: result.plan.id } : { planId: null, reason: result.reason };
}
